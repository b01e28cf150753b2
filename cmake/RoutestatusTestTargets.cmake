# Test registration for every gtest executable (include(GoogleTest) first).
#
# gtest_discover_tests() is wrapped (the GoogleTest module's own function is
# then reachable as _gtest_discover_tests) for two things:
#
# 1. Test labels. The module flattens PROPERTIES, so `LABELS "integration;slow"`
#    used to register only the first label ("integration"; "slow" became a
#    bogus property). The wrapper takes the LABELS value out of PROPERTIES (the
#    lowercase words after LABELS, up to the next UPPERCASE word) and sets the
#    whole list on the discovered tests from a ctest include file of its own.
#
# 2. Which test binaries a tree builds. Each registered target is recorded in
#    the `routestatus-tests` target: build it to get every test binary ctest
#    will run, plus what they depend on, and nothing else (no benchmarks, demo
#    or tools). ROUTESTATUS_TEST_LABELS (a list, empty by default = every test)
#    restricts that to targets carrying at least one of those labels; the
#    others are neither registered with ctest (so no <target>_NOT_BUILT test
#    appears) nor built by `routestatus-tests`. The sanitizer build
#    (`make test-sanitize`) sets "unit;integration" and runs `ctest -L
#    'unit|integration'`.
set(ROUTESTATUS_TEST_LABELS "" CACHE STRING
  "Register and build (routestatus-tests) only gtest targets with one of these ctest labels; empty: all")

function(gtest_discover_tests target)
  set(args "")
  set(labels "")
  set(test_list "${target}_TESTS")
  set(in_properties FALSE)
  set(in_labels FALSE)
  set(next_is_test_list FALSE)
  foreach(arg IN LISTS ARGN)
    if(in_labels AND NOT arg MATCHES "^[A-Z_]+$")
      list(APPEND labels "${arg}")
      continue()
    endif()
    set(in_labels FALSE)
    if(in_properties AND arg STREQUAL "LABELS")
      set(in_labels TRUE)
      continue()
    endif()
    if(arg STREQUAL "PROPERTIES")
      set(in_properties TRUE)
    endif()
    if(next_is_test_list)
      set(test_list "${arg}")
    endif()
    set(next_is_test_list FALSE)
    if(arg STREQUAL "TEST_LIST")
      set(next_is_test_list TRUE)
    endif()
    list(APPEND args "${arg}")
  endforeach()

  if(ROUTESTATUS_TEST_LABELS)
    set(wanted FALSE)
    foreach(label IN LISTS labels)
      if(label IN_LIST ROUTESTATUS_TEST_LABELS)
        set(wanted TRUE)
      endif()
    endforeach()
    if(NOT wanted)
      message(STATUS "Not registering ${target} (labels '${labels}', ROUTESTATUS_TEST_LABELS '${ROUTESTATUS_TEST_LABELS}')")
      return()
    endif()
  endif()

  set_property(GLOBAL APPEND PROPERTY ROUTESTATUS_TEST_TARGETS ${target})
  # Why the first label also as a property: the module leaves tests whose
  # names contain brackets (a parameter printed as ".a[") out of the test
  # list, so the include file below cannot label them; a property reaches
  # every test. One label only: the module flattens PROPERTIES (see 1.).
  if(labels)
    list(GET labels 0 first_label)
    if(NOT "PROPERTIES" IN_LIST args)
      list(APPEND args PROPERTIES)
    endif()
    list(APPEND args LABELS ${first_label})
  endif()
  _gtest_discover_tests(${target} ${args})
  if(labels)
    # Runs after the module's include file, which sets ${test_list}.
    set(labels_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_labels.cmake")
    file(WRITE "${labels_file}"
      "if(NOT \"\${${test_list}}\" STREQUAL \"\")\n"
      "  set_tests_properties(\${${test_list}} PROPERTIES LABELS \"${labels}\")\n"
      "endif()\n")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${labels_file}")
  endif()
endfunction()

# Call once at the end of the top-level CMakeLists.txt: defines the
# `routestatus-tests` target from the registered test executables.
function(routestatus_define_test_target)
  get_property(targets GLOBAL PROPERTY ROUTESTATUS_TEST_TARGETS)
  add_custom_target(routestatus-tests)
  if(targets)
    add_dependencies(routestatus-tests ${targets})
  endif()
endfunction()
