#pragma once

#include <chrono>
#include <cstdarg>
#include <string>
#include <vector>

namespace routestatus::e2e::bench {

// A Markdown table (GitHub flavour) with right-aligned numeric columns,
// padded so it also reads well in a terminal. Value type.
class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string Render() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// The nearest-rank `p` quantile (0 < p <= 1) of `v`; -1 when empty.
double Percentile(std::vector<double> v, double p);

// The machine's load averages over 1, 5 and 15 minutes ("4.10 3.52 2.90"
// from /proc/loadavg), or "?" when unreadable: every figure is printed
// with the load it was measured under (the machine is shared).
std::string LoadAverage();

// Seconds of the steady clock since `t`.
inline double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// printf into a std::string.
std::string Fmt(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace routestatus::e2e::bench
