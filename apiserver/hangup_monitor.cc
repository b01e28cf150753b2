#include "apiserver/hangup_monitor.h"

#include <glog/logging.h>

#include "apiserver/connection_sockets.h"

namespace routestatus::apiserver {

HangupMonitor::~HangupMonitor() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

uint64_t HangupMonitor::Add(int fd, std::shared_ptr<Watcher> watcher) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!thread_.joinable() && !stopping_) thread_ = std::thread([this] { Run(); });
  watched_[++next_id_] = {fd, std::move(watcher)};
  return next_id_;
}

void HangupMonitor::Remove(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  watched_.erase(id);
}

void HangupMonitor::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, period_, [this] { return stopping_; });
    // Why under the lock: Remove (before civetweb closes the socket) waits
    // for the poll, so a descriptor is never polled after it is reused.
    for (auto it = watched_.begin(); it != watched_.end();) {
      if (!PeerHungUp(it->second.first)) {
        ++it;
        continue;
      }
      VLOG(2) << "watch of " << it->second.second->resource().resource
              << ": the client closed the connection; ending the watch";
      it->second.second->Close();
      it = watched_.erase(it);
    }
  }
}

}  // namespace routestatus::apiserver
