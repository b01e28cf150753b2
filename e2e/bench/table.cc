#include "e2e/bench/table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

namespace routestatus::e2e::bench {

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
  i = i == 0 ? 0 : i - 1;
  return v[std::min(i, v.size() - 1)];
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  if (!(in >> one >> five >> fifteen)) return "?";
  return one + " " + five + " " + fifteen;
}

std::string Table::Render() const {
  std::vector<size_t> widths(header_.size(), 3);
  for (size_t i = 0; i < header_.size(); ++i) widths[i] = std::max(widths[i], header_[i].size());
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  }
  auto line = [&](const std::vector<std::string>& cells, bool left_first) {
    std::string out = "|";
    for (size_t i = 0; i < widths.size(); ++i) {
      std::string c = i < cells.size() ? cells[i] : "";
      std::string pad(widths[i] - c.size(), ' ');
      out += " " + ((i == 0 && left_first) ? c + pad : pad + c) + " |";
    }
    return out + "\n";
  };
  std::string out = line(header_, true);
  out += "|";
  for (size_t i = 0; i < widths.size(); ++i) {
    out += i == 0 ? " " + std::string(widths[i], '-') + " |"
                  : " " + std::string(widths[i] - 1, '-') + ": |";
  }
  out += "\n";
  for (const auto& row : rows_) out += line(row, true);
  return out;
}

std::string Fmt(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  const int n = vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  // Why sized: the benchmarks' notes run past any fixed buffer.
  std::string out(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) vsnprintf(out.data(), out.size() + 1, fmt, args);
  va_end(args);
  return out;
}

}  // namespace routestatus::e2e::bench
