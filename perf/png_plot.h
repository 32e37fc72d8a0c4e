// A log-log line plot written as PNG, for strata-perf --plot: time against size, one line per
// series. Self-contained (a bitmap font, stored deflate blocks), so the tool needs no plotting
// library on the machine that benchmarks.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace strata::perf {

struct PlotSeries {
  std::string label;
  std::vector<std::pair<double, double>> points;  // (x, y), both > 0
};

struct PlotSpec {
  std::string title;
  std::string xLabel = "size (bytes)";
  std::string yLabel = "time (us)";
  std::vector<PlotSeries> series;
};

// Writes the plot to `path`; returns "" or why it could not.
std::string writeLogLogPlotPng(const std::string& path, const PlotSpec& spec);

}  // namespace strata::perf
