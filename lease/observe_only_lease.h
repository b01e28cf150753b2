#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "lease/write_lease.h"

namespace routestatus::lease {

// The lease used with --update-status=false: the controller computes every
// desired entry and counts what it would write, but no work ever runs, so
// nothing is written. Thread-safe.
class ObserveOnlyLease final : public WriteLease {
 public:
  void Try(const std::string&, Work) override { ++suppressed_; }
  void Extend(const std::string&, EntryWriter) override {}
  void Remove(const std::string&) override {}
  LeaseState State() const override { return LeaseState::kElection; }

  // Work items dropped instead of written.
  uint64_t suppressed() const { return suppressed_.load(); }

 private:
  std::atomic<uint64_t> suppressed_{0};
};

}  // namespace routestatus::lease
