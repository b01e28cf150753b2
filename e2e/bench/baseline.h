#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace routestatus::e2e::bench {

// One figure a benchmark measured: its key in the baseline
// ("scale.100000.restart_ready_s"), what it is for people, its repeats
// (the median is compared) and how far above the accepted value it may go
// before it counts as a regression (0.5 = 50 %; every figure here is
// lower-is-better). Value type.
struct Figure {
  std::string key;
  std::string label;
  std::vector<double> values;  // one per repeat; negative = not measured (timeout)
  double tolerance = 0.5;
  double Median() const;  // of the non-negative values; -1 when there are none
};

// The last accepted figures of the benchmarks, machine-readable
// (e2e/bench/results/baseline.json: {"figures": {"key": value, ...}}), and
// the check of new figures against them. Why ratios with a tolerance and
// medians of repeats: this 2-core machine is shared; absolute times move
// with the load by 2x and more, so only a ratio well beyond that noise says
// the code got slower. Value type; not thread-safe.
class Baseline {
 public:
  // Reads `path`; a missing or unreadable file is an empty baseline.
  static Baseline Load(const std::string& path);
  // Writes every figure (sorted keys) to `path`; false on an I/O error.
  bool Save(const std::string& path) const;

  std::optional<double> Get(const std::string& key) const;
  void Set(const std::string& key, double value);

  // A Markdown table: each figure's median beside its accepted value, the
  // ratio and "ok", "REGRESSION (> +N %)", "better" (below 1 - tolerance)
  // or "new". Sets *regressions to how many regressed.
  std::string Compare(const std::vector<Figure>& figures, int* regressions) const;

 private:
  nlohmann::json figures_ = nlohmann::json::object();
};

// Compares `figures` with the accepted ones in `dir`/baseline.json and
// returns the verdict as Markdown (the table of Baseline::Compare, then a
// line counting the regressions, if any). With `accept`, the measured
// medians become the accepted values and the file is rewritten.
std::string CheckAgainstBaseline(const std::string& dir, bool accept,
                                 const std::vector<Figure>& figures);

}  // namespace routestatus::e2e::bench
