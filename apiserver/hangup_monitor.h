#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "apiserver/watcher.h"

namespace routestatus::apiserver {

// Ends the watches whose client has gone. kube-apiserver (Go's net/http)
// sees a client close its connection at once and ends the watch; civetweb
// notices only when a write fails, and a quiet watch (no event, and no
// bookmark now that bookmarks are kube's) writes nothing until its timeout,
// holding one of the server's worker threads. A thread polls the
// registered sockets every `period` and closes the watcher of one whose
// peer hung up. Real time on purpose: this is socket I/O, not simulated
// time. Thread-safe; the thread starts with the first Add.
class HangupMonitor {
 public:
  explicit HangupMonitor(std::chrono::milliseconds period) : period_(period) {}
  ~HangupMonitor();  // stops and joins the thread
  HangupMonitor(const HangupMonitor&) = delete;
  HangupMonitor& operator=(const HangupMonitor&) = delete;

  // Watches socket `fd` (owned by civetweb, open until Remove returns) for
  // `watcher`. Returns the id Remove takes.
  uint64_t Add(int fd, std::shared_ptr<Watcher> watcher);
  // Stops watching; after it returns `fd` is never touched again.
  void Remove(uint64_t id);

 private:
  void Run();

  const std::chrono::milliseconds period_;
  std::mutex mu_;
  std::condition_variable cv_;
  // by id; guarded by mu_
  std::map<uint64_t, std::pair<int, std::shared_ptr<Watcher>>> watched_;
  uint64_t next_id_ = 0;  // guarded by mu_
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;     // started under mu_ by the first Add
};

}  // namespace routestatus::apiserver
