#pragma once

// A response-body buffer for cpprest that gives a slow reader TCP flow
// control: while more than its capacity waits to be read, the write that
// cpprest's connection makes does not complete, so the connection reads no
// more from its socket and the sender is slowed by TCP. cpprest's own
// buffer has no limit: a watch stream that arrives faster than it is
// decoded (the initial events of a watch-list: 150 MB at 100,000 routes)
// piled up in memory.
//
// Include only where cpprest headers are included anyway (slow to compile).

#include <cstddef>
#include <cstdint>
#include <mutex>

#include <cpprest/producerconsumerstream.h>

namespace routestatus::kubeclient::rest {

class BoundedBodyBuffer final
    : public concurrency::streams::details::basic_producer_consumer_buffer<uint8_t> {
 public:
  // Holds writes while more than `capacity` bytes are unread; lets them go
  // on once the reader has brought that down to half of it.
  explicit BoundedBodyBuffer(size_t capacity);

  // The reader took `bytes` out of the buffer (call after each read).
  void Consumed(size_t bytes);
  // Completes a held write and holds none from now on (the stream is being
  // abandoned: the connection must be free to notice its cancellation).
  void Release();
  // Bytes written and not yet reported consumed.
  size_t pending() const;
  // Whether a write is held now.
  bool holding() const;

 protected:
  pplx::task<size_t> _putn(const uint8_t* ptr, size_t count) override;

 private:
  using Base = concurrency::streams::details::basic_producer_consumer_buffer<uint8_t>;
  const size_t capacity_;
  mutable std::mutex mu_;
  size_t pending_ = 0;      // GUARDED_BY(mu_)
  bool holding_ = false;    // GUARDED_BY(mu_)
  bool released_ = false;   // GUARDED_BY(mu_)
  pplx::task_completion_event<void> room_;  // GUARDED_BY(mu_): set when a held write may go on
};

}  // namespace routestatus::kubeclient::rest
