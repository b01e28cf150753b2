#pragma once

#include <string>

namespace routestatus::apiserver {

// Keeps a TCP port bound, without listening, while the server is "down"
// (Server::Restart): connections to it are refused (the kernel answers a
// SYN to a bound socket that does not listen with a reset), as they are
// while a real kube-apiserver restarts, yet no other socket on this host
// is handed the port by bind(0) meanwhile. Without it, another process
// (an e2e test running beside this one) could pick the free port for its
// own listener, and our clients would talk to that listener when they
// retry. Move-only; the destructor releases the port.
class PortReservation {
 public:
  PortReservation() = default;
  // Binds 0.0.0.0:`port` (SO_REUSEADDR, so the closed listener's TIME_WAIT
  // connections do not stand in the way). On failure the reservation is
  // empty and `error` (when given) says why; the caller goes on without it.
  static PortReservation Hold(int port, std::string* error = nullptr);
  ~PortReservation();
  PortReservation(PortReservation&& other) noexcept;
  PortReservation& operator=(PortReservation&& other) noexcept;
  PortReservation(const PortReservation&) = delete;
  PortReservation& operator=(const PortReservation&) = delete;

  bool held() const { return fd_ >= 0; }
  // Gives the port up now (the destructor does the same).
  void Release();

 private:
  explicit PortReservation(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace routestatus::apiserver
