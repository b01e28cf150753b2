#include "kubeclient/rest/line_splitter.h"

#include <cstring>

namespace routestatus::kubeclient::rest {

void LineSplitter::Feed(std::string_view bytes) {
  if (too_long_) return;
  // Why: compact lazily so a stream of small lines costs amortised O(1).
  if (pos_ > 0 && (pos_ >= buf_.size() || pos_ > (1 << 16))) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  buf_.append(bytes.data(), bytes.size());
}

LineSplitter::Result LineSplitter::Next(std::string_view* line) {
  if (too_long_) return Result::kTooLong;
  const size_t avail = buf_.size() - pos_;
  const char* start = buf_.data() + pos_;
  const void* nl = avail > scan_ ? std::memchr(start + scan_, '\n', avail - scan_) : nullptr;
  if (nl == nullptr) {
    scan_ = avail;
    if (avail > max_line_bytes_ + 1) {  // +1: room for a trailing '\r'
      too_long_ = true;
      return Result::kTooLong;
    }
    return Result::kNeedMore;
  }
  size_t len = static_cast<const char*>(nl) - start;
  size_t next = pos_ + len + 1;
  if (len > 0 && start[len - 1] == '\r') --len;
  if (len > max_line_bytes_) {
    too_long_ = true;
    return Result::kTooLong;
  }
  *line = std::string_view(start, len);
  pos_ = next;
  scan_ = 0;
  return Result::kLine;
}

}  // namespace routestatus::kubeclient::rest
