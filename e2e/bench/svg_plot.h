#pragma once

#include <string>
#include <vector>

namespace routestatus::e2e::bench {

// One line of a plot: (x, y) points, a colour and a legend label.
struct PlotSeries {
  std::string label;
  std::string color;  // any SVG colour, e.g. "#d62728"
  bool dashed = false;
  std::vector<std::pair<double, double>> points;
};

// A line chart with a linear x axis (ticks at the x values given), a
// linear y axis from 0 or, with `log_y`, a logarithmic one over the decades
// the (positive) points span, a legend and a title. Hand-written SVG 1.1 (no
// library). Pure function.
std::string RenderLinePlot(const std::string& title, const std::string& x_label,
                           const std::string& y_label, const std::vector<double>& x_ticks,
                           const std::vector<PlotSeries>& series, bool log_y = false);

// Writes `text` to `path`; false on failure.
bool WriteTextFile(const std::string& path, const std::string& text);

}  // namespace routestatus::e2e::bench
