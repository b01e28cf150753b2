#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace routestatus::e2e {

// One profile that `valgrind --tool=callgrind` wrote (one dump: a file
// `out.PID` or, for a dump before the program ended, `out.PID.PART`), read
// into what a check compares: the instructions executed and each function's
// own share of them. Value type.
struct CallgrindProfile {
  // The first event (Ir: instructions executed) of the dump's `totals:`
  // line: every thread, from the start (or the previous dump) to this one.
  uint64_t instructions = 0;
  // Function name (as callgrind prints it, demangled) -> its exclusive
  // instructions (not those of the functions it calls), summed over every
  // object and file the name appears in.
  std::map<std::string, uint64_t> self;
  // What made callgrind dump ("--dump-after=...", "Program termination").
  std::string trigger;
};

// Parses the text of a callgrind output file (format version 1, with name
// compression or without; jump lines, which --collect-jumps=yes adds, are
// not read). An error when the text has no `totals:` line: callgrind writes
// it last, so a file being written reads as incomplete. Pure function.
StatusOr<CallgrindProfile> ParseCallgrindProfile(std::string_view text);

// The functions whose exclusive instructions grew most from `small` to
// `large`, per unit of `units` (e.g. per route added): (name, growth per
// unit), largest first, at most `most`. Pure function.
std::vector<std::pair<std::string, double>> LargestGrowth(const CallgrindProfile& small,
                                                          const CallgrindProfile& large,
                                                          double units, size_t most);

}  // namespace routestatus::e2e
