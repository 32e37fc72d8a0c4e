// What strata-perf prints and writes: the machine, nccl-tests' tables, the CSV, the plot, the
// comparison against the baselines (ratios and the model's error), the list of algorithms.
#pragma once

#include <strata/strata.h>

#include <string>
#include <utility>
#include <vector>

#include "perf/collective_descriptors.h"
#include "perf/options.h"
#include "perf/stage_timeline.h"

namespace strata::perf {

// One size of one variant (implementation and algorithm): out of place [0], in place [1].
struct Row {
  std::string impl, algo, op;
  std::string requested;  // the variant asked for: an algorithm's name, auto (the tuner's choice; algo
                          // says which it chose) or - (an MPI or NCCL baseline)
  size_t bytes = 0, count = 0;
  std::string type, redop;
  int root = -1;
  double time[2] = {0, 0}, algbw[2] = {0, 0}, busbw[2] = {0, 0};
  long long wrong[2] = {0, 0};
  double modelUs[2] = {-1, -1};  // the tuner's price of the call, out of place and in place
  bool supported = true;
  std::string why;
  std::vector<std::pair<std::string, double>> phases;  // out of place, median us of the slowest rank
  StageSummary stages;  // --phases --mem device: the staged chunks' timeline
  // --mem device on the CUDA simulator: what one out-of-place call moved on the busiest rank, and
  // when it ran as a peer collective, its schedule's barriers (the device model's inputs).
  bool counted = false;
  double linkBytes = 0, localBytes = 0, hostBytes = 0, launches = 0;
  bool peer = false;
  double barriers = 0;
  std::vector<double> passTimes[2];  // --passes: each pass's time (us), of which time[] is the median
};

void printMachine(const Options& o, strataComm_t anyComm);
void printHeader(const std::string& impl, const std::string& algo, const CollectiveDescriptor& d);
void printRow(const Row& r);
void writeCsv(const Options& o, const std::vector<Row>& rows);
void writePlot(const Options& o, const std::vector<Row>& rows);
void printComparison(const Options& o, const std::vector<Row>& rows);
// The distribution of the model column's error over the subject's rows (every size, and 64 KiB up).
void printModelErrors(const Options& o, const std::vector<Row>& rows);
// --mem device on the CUDA simulator: per size, the counted bytes per rank against the lower bound,
// and what the device cost model predicts for them on its node (an H100 node by default), beside
// NCCL's published figures.
void printDeviceModel(const Options& o, const std::vector<Row>& rows, strataComm_t anyComm);
// The algorithms of every collective with their cost formulas (a Markdown table).
void listAlgorithms();

}  // namespace strata::perf
