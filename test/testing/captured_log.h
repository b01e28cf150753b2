#pragma once

#include <mutex>
#include <string>
#include <vector>

#include <glog/logging.h>

namespace routestatus::testing {

// Captures glog lines of one severity while it lives (registered as a log
// sink on construction, removed on destruction). Thread-safe.
class CapturedLog final : public google::LogSink {
 public:
  explicit CapturedLog(google::LogSeverity severity);
  ~CapturedLog() override;
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;

  using google::LogSink::send;
  void send(google::LogSeverity severity, const char* full_filename, const char* base_filename,
            int line, const google::LogMessageTime& time, const char* message,
            size_t message_len) override;

  // The captured messages, in order.
  std::vector<std::string> Lines() const;
  // How many captured messages hold `text`.
  int Count(const std::string& text) const;

 private:
  const google::LogSeverity severity_;
  mutable std::mutex mu_;
  std::vector<std::string> lines_;  // GUARDED_BY(mu_)
};

}  // namespace routestatus::testing
