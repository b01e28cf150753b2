// Sanitizer builds only (apiserver/CMakeLists.txt): a floor under the stack
// size that libraries give the threads they start.
//
// Why: libcivetweb sizes its HTTP worker threads' stacks itself (Debian's
// build: 100 KiB, fixed at its compile time). The server's handlers recurse
// through JSON (serialising, copying, schema checks), and with AddressSanitizer
// and UBSan at -O0 their frames are several times larger than in the optimised
// build (nlohmann::json's serializer: about 4.6 KiB a level with clang, 0.8
// KiB with GCC), so a Route CRD dumped on a worker thread overflows 100 KiB.
// The optimised build keeps civetweb's size.
//
// How: this definition in the executable interposes on libc's for every
// shared library (civetweb calls it through its PLT) and forwards with at
// least kSanitizerMinimumStack bytes.

#include <dlfcn.h>
#include <pthread.h>

#include <algorithm>
#include <cstddef>

namespace {

constexpr size_t kSanitizerMinimumStack = 1 << 20;

using SetStackSize = int (*)(pthread_attr_t*, size_t);

SetStackSize LibcSetStackSize() {
  static const SetStackSize libc =
      reinterpret_cast<SetStackSize>(dlsym(RTLD_NEXT, "pthread_attr_setstacksize"));
  return libc;
}

}  // namespace

extern "C" int pthread_attr_setstacksize(pthread_attr_t* attr, size_t size) {
  return LibcSetStackSize()(attr, std::max(size, kSanitizerMinimumStack));
}
