#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "lease/write_lease.h"

namespace routestatus::cmd {

// The write lease of a replica that reports only while its router serves
// (--router-ready-url). Open, it is `inner`. Closed, every piece of work
// that comes due finds nothing to do: no request, no write, no takeover
// (WorkResult::kNone, no retry; the caller re-queues every route when the
// gate opens again), while Extend and Remove still reach `inner`, so the
// replica keeps learning from its peers' writes. Thread-safe.
class GatedWriteLease final : public lease::WriteLease {
 public:
  // `inner` must outlive this object. Starts closed.
  explicit GatedWriteLease(lease::WriteLease& inner) : inner_(inner) {}

  void SetOpen(bool open) { open_.store(open); }
  bool open() const { return open_.load(); }
  // Pieces of work that came due while closed.
  uint64_t withheld() const { return withheld_.load(); }

  void Try(const std::string& key, lease::Work work) override {
    inner_.Try(key, [this, work = std::move(work)]() -> lease::WorkOutcome {
      if (!open_.load()) {
        ++withheld_;
        return lease::WorkOutcome{};
      }
      return work();
    });
  }
  void Extend(const std::string& key, lease::EntryWriter writer) override {
    inner_.Extend(key, writer);
  }
  void Remove(const std::string& key) override { inner_.Remove(key); }
  lease::LeaseState State() const override { return inner_.State(); }

 private:
  lease::WriteLease& inner_;
  std::atomic<bool> open_{false};
  std::atomic<uint64_t> withheld_{0};
};

}  // namespace routestatus::cmd
