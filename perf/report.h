// What strata-perf prints and writes: the machine, nccl-tests' tables, the CSV, the plot, the
// comparison against the baselines (ratios and the model's error), the list of algorithms.
#pragma once

#include <strata/strata.h>

#include <string>
#include <utility>
#include <vector>

#include "perf/collective_descriptors.h"
#include "perf/options.h"

namespace strata::perf {

// One size of one variant (implementation and algorithm): out of place [0], in place [1].
struct Row {
  std::string impl, algo, op;
  size_t bytes = 0, count = 0;
  std::string type, redop;
  int root = -1;
  double time[2] = {0, 0}, algbw[2] = {0, 0}, busbw[2] = {0, 0};
  long long wrong[2] = {0, 0};
  double modelUs = -1;
  bool supported = true;
  std::string why;
  std::vector<std::pair<std::string, double>> phases;  // out of place, median us of the slowest rank
};

void printMachine(const Options& o, strataComm_t anyComm);
void printHeader(const std::string& impl, const std::string& algo, const CollectiveDescriptor& d);
void printRow(const Row& r);
void writeCsv(const Options& o, const std::vector<Row>& rows);
void writePlot(const Options& o, const std::vector<Row>& rows);
void printComparison(const Options& o, const std::vector<Row>& rows);
// The algorithms of every collective with their cost formulas (a Markdown table).
void listAlgorithms();

}  // namespace strata::perf
