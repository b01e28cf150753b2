#pragma once

#include <cstddef>
#include <string>

#include "base/status.h"

namespace routestatus {

// Size limits of the files the process reads. Why these: yaml-cpp holds a
// document in about 30 times its size (a 50 MB list took 1.44 GB), and the
// pod's memory limit is 256 MiB; each limit is far above what a real file of
// its kind holds.
inline constexpr size_t kMaxConfigFileBytes = 1 << 20;      // --config: a few KiB
inline constexpr size_t kMaxKubeconfigFileBytes = 4 << 20;  // many contexts with inline certs
inline constexpr size_t kMaxTokenFileBytes = 64 << 10;      // a JWT is 1-2 KiB
inline constexpr size_t kMaxPemFileBytes = 4 << 20;         // a large CA bundle is ~300 KiB

// Reads the whole of the regular file `path`, at most `max_bytes` of it.
// Never blocks on a FIFO and never reads a device or directory: those are
// kInvalid naming what the path is. A file larger than `max_bytes` (also one
// growing past it while read) is kInvalid naming the limit. A file that
// cannot be opened is kInvalid with the system's reason. Messages do not
// name the path (callers say which file it is). Thread-safe.
StatusOr<std::string> ReadBoundedFile(const std::string& path, size_t max_bytes);

// "1 MiB", "64 KiB", "123 bytes": for the limits in messages.
std::string FormatByteSize(size_t bytes);

}  // namespace routestatus
