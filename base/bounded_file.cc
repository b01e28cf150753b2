#include "base/bounded_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace routestatus {
namespace {

// What a non-regular file is, for the message.
const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Closes the descriptor on every return path.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string FormatByteSize(size_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1u << 10) && bytes % (1u << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

StatusOr<std::string> ReadBoundedFile(const std::string& path, size_t max_bytes) {
  // Why O_NONBLOCK: opening a FIFO for reading blocks until a writer comes;
  // with it the open returns at once and fstat below refuses the FIFO.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return Status(StatusCode::kInvalid, std::strerror(errno));
  FdCloser closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Status(StatusCode::kInvalid, std::strerror(errno));
  if (!S_ISREG(st.st_mode)) {
    return Status(StatusCode::kInvalid,
                  std::string("is ") + KindOf(st.st_mode) + ", not a regular file (give the path of a file)");
  }
  auto too_large = [&] {
    return Status(StatusCode::kInvalid,
                  "larger than the limit of " + FormatByteSize(max_bytes) + " for this file");
  };
  if (static_cast<unsigned long long>(st.st_size) > max_bytes) return too_large();
  std::string out;
  out.resize(static_cast<size_t>(st.st_size));
  size_t used = 0;
  char probe[4096];
  while (true) {
    // Why read past st_size: the file may grow (or be a /proc file with
    // size 0); the limit holds for what is actually read.
    char* dst = used < out.size() ? out.data() + used : probe;
    size_t room = used < out.size() ? out.size() - used : sizeof(probe);
    ssize_t n = ::read(fd, dst, room);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status(StatusCode::kInvalid, std::strerror(errno));
    }
    if (n == 0) break;
    if (dst == probe) {
      if (used + static_cast<size_t>(n) > max_bytes) return too_large();
      out.resize(used);
      out.append(probe, static_cast<size_t>(n));
    }
    used += static_cast<size_t>(n);
  }
  out.resize(used);
  return out;
}

}  // namespace routestatus
