// ParseDuration / FormatDuration (declared in config.h).
#include <cmath>
#include <cstdlib>

#include "cmd/route-status-controller/config.h"

namespace routestatus::cmd {

std::optional<Duration> ParseDuration(std::string_view text, std::string* error) {
  if (text.empty()) {
    *error = "empty duration";
    return std::nullopt;
  }
  if (text == "0") return Duration(0);
  if (text.front() == '-') {
    *error = "negative duration";
    return std::nullopt;
  }
  double total_ms = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t num_start = i;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
    if (i == num_start) {
      *error = "expected a number at \"" + std::string(text.substr(num_start)) + "\"";
      return std::nullopt;
    }
    std::string number(text.substr(num_start, i - num_start));
    char* end = nullptr;
    double value = std::strtod(number.c_str(), &end);
    if (*end != '\0') {
      *error = "bad number \"" + number + "\"";
      return std::nullopt;
    }
    size_t unit_start = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    std::string_view unit = text.substr(unit_start, i - unit_start);
    double scale;
    if (unit == "ms") {
      scale = 1;
    } else if (unit == "s") {
      scale = 1000;
    } else if (unit == "m") {
      scale = 60 * 1000;
    } else if (unit == "h") {
      scale = 3600 * 1000;
    } else if (unit.empty()) {
      *error = "missing unit after \"" + number + "\" (use ms, s, m or h)";
      return std::nullopt;
    } else {
      *error = "unknown unit \"" + std::string(unit) + "\" (use ms, s, m or h)";
      return std::nullopt;
    }
    total_ms += value * scale;
  }
  if (total_ms > 1e12) {
    *error = "duration too large";
    return std::nullopt;
  }
  return Duration(static_cast<int64_t>(std::llround(total_ms)));
}

std::string FormatDuration(Duration d) {
  int64_t ms = d.count();
  if (ms == 0) return "0s";
  std::string out;
  if (ms < 0) {
    out = "-";
    ms = -ms;
  }
  if (ms < 1000) return out + std::to_string(ms) + "ms";
  int64_t h = ms / 3600000;
  ms %= 3600000;
  int64_t m = ms / 60000;
  ms %= 60000;
  if (h > 0) out += std::to_string(h) + "h";
  if (m > 0) out += std::to_string(m) + "m";
  if (ms > 0) {
    out += std::to_string(ms / 1000);
    if (int64_t frac = ms % 1000; frac > 0) {
      std::string f = std::to_string(1000 + frac).substr(1);  // 3 digits
      while (f.back() == '0') f.pop_back();
      out += "." + f;
    }
    out += "s";
  }
  return out;
}

}  // namespace routestatus::cmd
