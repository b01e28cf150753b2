#pragma once

#include <string>
#include <vector>

#include "e2e/bench/scenarios.h"

namespace routestatus::e2e::bench {

// Where a figure came from: the command line, the time (UTC), the commit of
// the source tree (with "+ uncommitted changes" when it is dirty), the
// machine (cores, CPU model, memory) and the load average when the
// benchmark started. One Markdown paragraph; every results file starts with
// it so that a table read on its own (docs/benchmarks.md links them) still
// names its flags, machine and load. Reads /proc and runs git; not
// thread-safe with respect to a changing working tree, which nobody minds.
std::string Provenance(const std::vector<std::string>& command_line, const std::string& benchmark,
                       const std::string& load_before);

// Writes `options.results_dir/file`: a notice that the bench writes the file,
// `options.provenance`, the load average now, then `tables`. Returns false
// when the file cannot be written.
bool WriteResultMarkdown(const BenchOptions& options, const std::string& file,
                         const std::string& tables);

}  // namespace routestatus::e2e::bench
