#include "apiserver/connection_sockets.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstdlib>
#include <vector>

namespace routestatus::apiserver {

namespace {

// The port of an AF_INET/AF_INET6 address, -1 for anything else.
int PortOf(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(a).sin_port);
  if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(a).sin6_port);
  return -1;
}

}  // namespace

void ForEachConnection(int local_port, const std::function<void(int fd, int peer_port)>& visit) {
  std::vector<int> fds;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return;
  while (dirent* e = readdir(dir)) {
    int fd = std::atoi(e->d_name);
    if (fd > 2 && fd != dirfd(dir)) fds.push_back(fd);
  }
  closedir(dir);
  for (int fd : fds) {
    sockaddr_storage local{}, peer{};
    socklen_t ll = sizeof(local), pl = sizeof(peer);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &ll) != 0) continue;
    if (PortOf(local) != local_port) continue;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &pl) != 0) continue;  // the listener
    visit(fd, PortOf(peer));
  }
}

int FindConnection(int local_port, int peer_port) {
  int found = -1;
  ForEachConnection(local_port, [&](int fd, int peer) {
    if (peer == peer_port) found = fd;
  });
  return found;
}

bool PeerHungUp(int fd) {
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  if (poll(&p, 1, 0) <= 0) return false;
  if ((p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0) return true;
  char byte;
  return recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

}  // namespace routestatus::apiserver
