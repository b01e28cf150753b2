#include "apiserver/port_reservation.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace routestatus::apiserver {

PortReservation PortReservation::Hold(int port, std::string* error) {
  auto fail = [&](const char* what) {
    if (error != nullptr) *error = std::string(what) + ": " + std::strerror(errno);
    return PortReservation();
  };
  if (port <= 0 || port > 65535) {
    errno = EINVAL;
    return fail("bad port");
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail("socket");
  PortReservation reservation(fd);
  int one = 1;
  if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0) {
    return fail("setsockopt SO_REUSEADDR");
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return fail(("bind port " + std::to_string(port)).c_str());
  }
  return reservation;
}

PortReservation::~PortReservation() { Release(); }

PortReservation::PortReservation(PortReservation&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)) {}

PortReservation& PortReservation::operator=(PortReservation&& other) noexcept {
  if (this != &other) {
    Release();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void PortReservation::Release() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

}  // namespace routestatus::apiserver
