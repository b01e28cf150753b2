#include "test/testing/captured_log.h"

namespace routestatus::testing {

CapturedLog::CapturedLog(google::LogSeverity severity) : severity_(severity) {
  google::AddLogSink(this);
}

CapturedLog::~CapturedLog() { google::RemoveLogSink(this); }

void CapturedLog::send(google::LogSeverity severity, const char*, const char*, int,
                       const google::LogMessageTime&, const char* message, size_t message_len) {
  if (severity != severity_) return;
  std::lock_guard<std::mutex> l(mu_);
  lines_.emplace_back(message, message_len);
}

std::vector<std::string> CapturedLog::Lines() const {
  std::lock_guard<std::mutex> l(mu_);
  return lines_;
}

int CapturedLog::Count(const std::string& text) const {
  std::lock_guard<std::mutex> l(mu_);
  int n = 0;
  for (const auto& line : lines_) n += line.find(text) != std::string::npos ? 1 : 0;
  return n;
}

}  // namespace routestatus::testing
