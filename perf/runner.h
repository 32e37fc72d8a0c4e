// strata-perf's measurement: every variant (implementation and algorithm) of a collective over the
// sweep, checked against the reference first, timed interleaved (perf/strata_perf.cc).
#pragma once

#include <strata/strata.h>

#include <string>
#include <utility>
#include <vector>

#include "perf/collective_descriptors.h"
#include "perf/options.h"
#include "perf/report.h"

namespace strata::perf {

// The rows of `passes` whole sweeps (`rows`: each pass's rows in the same order, one pass after
// another) as one sweep's: each row's time the median of its passes' (algbw and busbw with it),
// its wrong results summed, the rest as the first pass measured it.
std::vector<Row> medianOfPasses(const std::vector<Row>& rows, int passes);

struct Runner {
  const Options& o;
  std::string ncclWhy;  // why NCCL cannot run here ("" when it can)
  std::vector<Row> rows;
  long long totalWrong = 0;

  // Every implementation and algorithm at one size, then the next size (printed as tables after).
  void run(const std::vector<std::pair<std::string, std::string>>& variants, const CollectiveDescriptor& d);

 private:
  std::vector<Row> measureSize(const std::vector<std::pair<std::string, std::string>>& variants,
                               const CollectiveDescriptor& d, const std::vector<strataComm_t>& comms, size_t bytes,
                               Buffers& buf, Buffers& dbuf, unsigned seed);
};

}  // namespace strata::perf
