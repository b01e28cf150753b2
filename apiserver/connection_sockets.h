#pragma once

#include <functional>

namespace routestatus::apiserver {

// Calls `visit(fd, peer_port)` for every connected TCP socket of this
// process whose local port is `local_port`: the connections a listener on
// that port accepted. Why /proc/self/fd: civetweb does not expose its
// connections' sockets. The descriptors are listed before the first visit,
// so `visit` may shut down or close the one it is given.
void ForEachConnection(int local_port, const std::function<void(int fd, int peer_port)>& visit);

// The socket of the connection from `peer_port` accepted on `local_port`;
// -1 if there is none.
int FindConnection(int local_port, int peer_port);

// True if the peer of connected socket `fd` has closed or reset the
// connection (end of stream or an error pending); data it sent is left
// unread. Never blocks.
bool PeerHungUp(int fd);

}  // namespace routestatus::apiserver
