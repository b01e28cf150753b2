#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace routestatus::kubeclient::rest {

// Splits a byte stream (a watch response body arriving in arbitrary chunks)
// into '\n'-terminated lines. A trailing '\r' is stripped. Lines longer than
// `max_line_bytes` are refused instead of buffered without bound.
// Not thread-safe: one reader feeds and drains it.
class LineSplitter {
 public:
  enum class Result {
    kLine,      // *line holds the next complete line (without '\n')
    kNeedMore,  // no complete line buffered yet: Feed() more bytes
    kTooLong,   // the current line exceeds max_line_bytes (sticky)
  };

  explicit LineSplitter(size_t max_line_bytes = 16 << 20) : max_line_bytes_(max_line_bytes) {}

  // Appends bytes that arrived.
  void Feed(std::string_view bytes);
  // The next line. The view stays valid until the next Feed() or Next().
  Result Next(std::string_view* line);
  // Bytes of an incomplete line still buffered (non-zero at end of stream
  // means the stream was truncated mid-line).
  size_t pending() const { return buf_.size() - pos_; }

 private:
  size_t max_line_bytes_;
  std::string buf_;
  size_t pos_ = 0;   // start of the first unread line in buf_
  size_t scan_ = 0;  // bytes of buf_ (from pos_) already searched for '\n'
  bool too_long_ = false;
};

}  // namespace routestatus::kubeclient::rest
