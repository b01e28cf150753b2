#pragma once

#include "lease/write_lease.h"

namespace routestatus::lease {

// The work outcomes the lease tests return.
inline constexpr WorkOutcome kNoneOutcome{WorkResult::kNone, false};
inline constexpr WorkOutcome kExtendOutcome{WorkResult::kExtend, false};
inline constexpr WorkOutcome kReleaseOutcome{WorkResult::kRelease, false};
inline constexpr WorkOutcome kReleaseRetry{WorkResult::kRelease, true};

}  // namespace routestatus::lease
