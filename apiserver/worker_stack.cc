// A floor under the stack size that libraries give the threads they start
// (apiserver/CMakeLists.txt sets ROUTESTATUS_WORKER_STACK_BYTES).
//
// Why: libcivetweb sizes its HTTP worker threads' stacks itself (Debian's
// build: 100 KiB, fixed at its compile time), and the server's handlers
// recurse through JSON: nlohmann::json serialises and copies recursively. A
// body nested 1000 levels deep overflowed 100 KiB and killed the server,
// although kube-apiserver accepts up to Go's 10000 levels (go_json.cc
// rejects deeper ones as kube does); 16 MiB serves 10000 levels at -O2 (the
// test ServerTest.BodiesNestedUpToGosMaxDepthAreServedAndDeeperAreBadRequests).
// With AddressSanitizer and UBSan at -O0 the frames are several times larger
// (nlohmann::json's serializer: about 4.6 KiB a level with clang, 0.8 KiB
// with GCC), hence a larger floor in sanitizer builds. Only address space is
// reserved; pages are touched as a thread's recursion reaches them.
//
// How: this definition in the executable interposes on libc's for every
// shared library (civetweb calls it through its PLT) and forwards with at
// least ROUTESTATUS_WORKER_STACK_BYTES.

#include <dlfcn.h>
#include <pthread.h>

#include <algorithm>
#include <cstddef>

namespace {

constexpr size_t kMinimumStack = ROUTESTATUS_WORKER_STACK_BYTES;

using SetStackSize = int (*)(pthread_attr_t*, size_t);

SetStackSize LibcSetStackSize() {
  static const SetStackSize libc =
      reinterpret_cast<SetStackSize>(dlsym(RTLD_NEXT, "pthread_attr_setstacksize"));
  return libc;
}

}  // namespace

extern "C" int pthread_attr_setstacksize(pthread_attr_t* attr, size_t size) {
  return LibcSetStackSize()(attr, std::max(size, kMinimumStack));
}
