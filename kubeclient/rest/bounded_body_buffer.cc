#include "kubeclient/rest/bounded_body_buffer.h"

#include <algorithm>

namespace routestatus::kubeclient::rest {

// Why a block size of 512: as cpprest's own producer_consumer_buffer; a
// write larger than that gets a block of its own size.
BoundedBodyBuffer::BoundedBodyBuffer(size_t capacity) : Base(512), capacity_(capacity) {}

pplx::task<size_t> BoundedBodyBuffer::_putn(const uint8_t* ptr, size_t count) {
  // Why get() is safe: the base copies the bytes and returns a finished task.
  const size_t written = Base::_putn(ptr, count).get();
  std::lock_guard<std::mutex> lock(mu_);
  pending_ += written;
  if (released_ || pending_ <= capacity_) return pplx::task_from_result(written);
  holding_ = true;
  room_ = pplx::task_completion_event<void>();
  return pplx::create_task(room_).then([written] { return written; });
}

void BoundedBodyBuffer::Consumed(size_t bytes) {
  pplx::task_completion_event<void> room;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_ -= std::min(bytes, pending_);
    // Why half: resuming at once would hold and release the connection at
    // every chunk while the reader runs behind.
    if (!holding_ || pending_ > capacity_ / 2) return;
    holding_ = false;
    room = room_;
  }
  room.set();
}

void BoundedBodyBuffer::Release() {
  pplx::task_completion_event<void> room;
  bool was_holding;
  {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    was_holding = holding_;
    holding_ = false;
    room = room_;
  }
  if (was_holding) room.set();
}

size_t BoundedBodyBuffer::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_;
}

bool BoundedBodyBuffer::holding() const {
  std::lock_guard<std::mutex> lock(mu_);
  return holding_;
}

}  // namespace routestatus::kubeclient::rest
