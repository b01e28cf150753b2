#include "e2e/bench/baseline.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "e2e/bench/table.h"

namespace routestatus::e2e::bench {

double Figure::Median() const {
  std::vector<double> v;
  for (double x : values) {
    if (x >= 0) v.push_back(x);
  }
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

Baseline Baseline::Load(const std::string& path) {
  Baseline b;
  std::ifstream in(path);
  if (!in) return b;
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("figures") && j["figures"].is_object()) {
    b.figures_ = j["figures"];
  }
  return b;
}

bool Baseline::Save(const std::string& path) const {
  std::ofstream out(path);
  if (!out) return false;
  out << nlohmann::json{{"figures", figures_}}.dump(2) << "\n";
  return static_cast<bool>(out);
}

std::optional<double> Baseline::Get(const std::string& key) const {
  auto it = figures_.find(key);
  if (it == figures_.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

void Baseline::Set(const std::string& key, double value) { figures_[key] = value; }

std::string Baseline::Compare(const std::vector<Figure>& figures, int* regressions) const {
  *regressions = 0;
  Table table({"figure", "measured (median)", "repeats", "baseline", "ratio", "verdict"});
  for (const Figure& f : figures) {
    const double m = f.Median();
    std::optional<double> base = Get(f.key);
    std::string ratio = "-";
    std::string verdict = "new";
    if (m < 0) {
      verdict = "not measured";
    } else if (base) {
      // Why a floor of 0.05: figures of about zero (0 storage reads) make
      // any ratio meaningless; compare them as if they were 0.05.
      const double r = std::max(m, 0.05) / std::max(*base, 0.05);
      ratio = Fmt("%.2f", r);
      if (r > 1 + f.tolerance) {
        verdict = Fmt("REGRESSION (> +%.0f %%)", f.tolerance * 100);
        ++*regressions;
      } else if (r < 1 - f.tolerance / (1 + f.tolerance)) {
        verdict = "better";
      } else {
        verdict = "ok";
      }
    }
    table.AddRow({f.label + " (" + f.key + ")", m < 0 ? "timeout" : Fmt("%.2f", m),
                  std::to_string(f.values.size()), base ? Fmt("%.2f", *base) : "-", ratio,
                  verdict});
  }
  return table.Render();
}

std::string CheckAgainstBaseline(const std::string& dir, bool accept,
                                 const std::vector<Figure>& figures) {
  const std::string path = dir + "/baseline.json";
  Baseline baseline = Baseline::Load(path);
  int regressions = 0;
  std::string md = "Against the accepted figures (baseline.json; a figure regresses when its "
                   "median exceeds the accepted value by its tolerance):\n\n" +
                   baseline.Compare(figures, &regressions);
  if (regressions > 0) md += Fmt("\nREGRESSIONS: %d figure(s) beyond tolerance\n", regressions);
  if (accept) {
    for (const Figure& f : figures) {
      if (f.Median() >= 0) baseline.Set(f.key, f.Median());
    }
    md += baseline.Save(path) ? "\nAccepted as the new baseline.\n"
                              : "\nCould not write " + path + ".\n";
  }
  return md;
}

}  // namespace routestatus::e2e::bench
