# Which test executables a build tree builds and registers with ctest.
#
# Every gtest executable registers its tests through gtest_discover_tests()
# (directly or via routestatus_add_test() in test/CMakeLists.txt). The wrapper
# below records each such target in the `routestatus-tests` target (build it
# to get every test binary ctest will run, plus what they depend on, and
# nothing else: no benchmarks, demo or tools).
#
# ROUTESTATUS_SKIP_TEST_LABELS (a list, empty by default) names ctest labels
# whose tests this tree leaves out entirely: a target whose gtest_discover_tests
# PROPERTIES carry one of those labels is neither added to `routestatus-tests`
# nor registered with ctest (so ctest reports no <target>_NOT_BUILT test for
# it). The sanitizer build (`make test-sanitize`) sets "e2e;slow": those tests
# are excluded from its ctest run anyway. Any other test whose executable is
# not built still shows up in ctest as <target>_NOT_BUILT and fails.
set(ROUTESTATUS_SKIP_TEST_LABELS "" CACHE STRING
  "ctest labels whose test executables this build tree neither builds in routestatus-tests nor registers")

# Overrides the GoogleTest module's function (include(GoogleTest) first); the
# module's own is then reachable as _gtest_discover_tests. The arguments are
# passed through unchanged. A label is matched as any argument after
# PROPERTIES equal to it (test property values are never "e2e" or "slow"
# otherwise).
function(gtest_discover_tests target)
  set(in_properties FALSE)
  foreach(arg IN LISTS ARGN)
    if(arg STREQUAL "PROPERTIES")
      set(in_properties TRUE)
    elseif(in_properties AND arg IN_LIST ROUTESTATUS_SKIP_TEST_LABELS)
      message(STATUS "Not registering ${target} (label ${arg} is in ROUTESTATUS_SKIP_TEST_LABELS)")
      return()
    endif()
  endforeach()
  set_property(GLOBAL APPEND PROPERTY ROUTESTATUS_TEST_TARGETS ${target})
  _gtest_discover_tests(${target} ${ARGN})
endfunction()

# Call once at the end of the top-level CMakeLists.txt: defines the
# `routestatus-tests` target from the recorded test executables.
function(routestatus_define_test_target)
  get_property(targets GLOBAL PROPERTY ROUTESTATUS_TEST_TARGETS)
  add_custom_target(routestatus-tests)
  if(targets)
    add_dependencies(routestatus-tests ${targets})
  endif()
endfunction()
