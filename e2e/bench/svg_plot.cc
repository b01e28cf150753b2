#include "e2e/bench/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace routestatus::e2e::bench {
namespace {

std::string Num(double v) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%.1f", v);
  return buf;
}

std::string TickLabel(double v) {
  char buf[32];
  if (std::fabs(v - std::round(v)) < 1e-9) {
    snprintf(buf, sizeof(buf), "%.0f", v);
  } else {
    snprintf(buf, sizeof(buf), "%.2g", v);
  }
  return buf;
}

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '&') {
      out += "&amp;";
    } else {
      out += c;
    }
  }
  return out;
}

// A "nice" step (1, 2 or 5 x 10^k) giving about `count` ticks up to `max`.
double NiceStep(double max, int count) {
  double raw = max / count;
  double p = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= raw) return m * p;
  }
  return 10 * p;
}

}  // namespace

std::string RenderLinePlot(const std::string& title, const std::string& x_label,
                           const std::string& y_label, const std::vector<double>& x_ticks,
                           const std::vector<PlotSeries>& series, bool log_y) {
  const double width = 640, height = 400;
  const double left = 70, right = 200, top = 40, bottom = 55;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  double x_min = 0, x_max = 1, y_max = 0;
  if (!x_ticks.empty()) {
    x_min = *std::min_element(x_ticks.begin(), x_ticks.end());
    x_max = *std::max_element(x_ticks.begin(), x_ticks.end());
  }
  if (x_max <= x_min) x_max = x_min + 1;
  for (const PlotSeries& s : series) {
    for (const auto& p : s.points) y_max = std::max(y_max, p.second);
  }
  if (y_max <= 0) y_max = 1;
  double step = NiceStep(y_max, 5);
  y_max = std::ceil(y_max / step) * step;
  std::vector<double> y_ticks;
  for (double y = 0; y <= y_max + step / 2; y += step) y_ticks.push_back(y);
  // Log scale: whole decades around the positive points.
  double lo_exp = 0, hi_exp = 1;
  if (log_y) {
    double lo = 0, hi = 0;
    for (const PlotSeries& s : series) {
      for (const auto& p : s.points) {
        if (p.second <= 0) continue;
        lo = lo > 0 ? std::min(lo, p.second) : p.second;
        hi = std::max(hi, p.second);
      }
    }
    if (lo <= 0) lo = hi = 1;
    lo_exp = std::floor(std::log10(lo));
    hi_exp = std::max(lo_exp + 1, std::ceil(std::log10(hi)));
    y_ticks.clear();
    for (double e = lo_exp; e <= hi_exp + 0.5; e += 1) y_ticks.push_back(std::pow(10, e));
  }
  auto px = [&](double x) { return left + (x - x_min) / (x_max - x_min) * plot_w; };
  auto py = [&](double y) {
    if (!log_y) return top + plot_h - y / y_max * plot_h;
    double e = std::log10(std::max(y, std::pow(10, lo_exp)));
    return top + plot_h - (e - lo_exp) / (hi_exp - lo_exp) * plot_h;
  };

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\""
      << height << "\" viewBox=\"0 0 " << width << " " << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg << "<text x=\"" << Num(left + plot_w / 2) << "\" y=\"22\" text-anchor=\"middle\" "
      << "font-size=\"15\" font-weight=\"bold\">" << Escape(title) << "</text>\n";
  // Grid and y ticks.
  for (double y : y_ticks) {
    svg << "<line x1=\"" << Num(left) << "\" y1=\"" << Num(py(y)) << "\" x2=\""
        << Num(left + plot_w) << "\" y2=\"" << Num(py(y)) << "\" stroke=\"#ddd\"/>\n";
    svg << "<text x=\"" << Num(left - 8) << "\" y=\"" << Num(py(y) + 4)
        << "\" text-anchor=\"end\">" << TickLabel(y) << "</text>\n";
  }
  for (double x : x_ticks) {
    svg << "<line x1=\"" << Num(px(x)) << "\" y1=\"" << Num(top + plot_h) << "\" x2=\""
        << Num(px(x)) << "\" y2=\"" << Num(top + plot_h + 5) << "\" stroke=\"black\"/>\n";
    svg << "<text x=\"" << Num(px(x)) << "\" y=\"" << Num(top + plot_h + 20)
        << "\" text-anchor=\"middle\">" << TickLabel(x) << "</text>\n";
  }
  // Axes and labels.
  svg << "<polyline points=\"" << Num(left) << "," << Num(top) << " " << Num(left) << ","
      << Num(top + plot_h) << " " << Num(left + plot_w) << "," << Num(top + plot_h)
      << "\" fill=\"none\" stroke=\"black\"/>\n";
  svg << "<text x=\"" << Num(left + plot_w / 2) << "\" y=\"" << Num(height - 12)
      << "\" text-anchor=\"middle\">" << Escape(x_label) << "</text>\n";
  svg << "<text x=\"18\" y=\"" << Num(top + plot_h / 2) << "\" text-anchor=\"middle\" "
      << "transform=\"rotate(-90 18 " << Num(top + plot_h / 2) << ")\">" << Escape(y_label)
      << "</text>\n";
  // Series and legend.
  double legend_y = top + 10;
  for (const PlotSeries& s : series) {
    std::string dash = s.dashed ? " stroke-dasharray=\"6 4\"" : "";
    svg << "<polyline fill=\"none\" stroke=\"" << s.color << "\" stroke-width=\"2\"" << dash
        << " points=\"";
    for (const auto& p : s.points) svg << Num(px(p.first)) << "," << Num(py(p.second)) << " ";
    svg << "\"/>\n";
    for (const auto& p : s.points) {
      svg << "<circle cx=\"" << Num(px(p.first)) << "\" cy=\"" << Num(py(p.second))
          << "\" r=\"3.5\" fill=\"" << s.color << "\"/>\n";
    }
    double lx = left + plot_w + 15;
    svg << "<line x1=\"" << Num(lx) << "\" y1=\"" << Num(legend_y) << "\" x2=\"" << Num(lx + 24)
        << "\" y2=\"" << Num(legend_y) << "\" stroke=\"" << s.color << "\" stroke-width=\"2\""
        << dash << "/>\n";
    svg << "<text x=\"" << Num(lx + 30) << "\" y=\"" << Num(legend_y + 4) << "\">"
        << Escape(s.label) << "</text>\n";
    legend_y += 20;
  }
  svg << "</svg>\n";
  return svg.str();
}

bool WriteTextFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  return static_cast<bool>(out);
}

}  // namespace routestatus::e2e::bench
