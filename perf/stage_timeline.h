// strata-perf --phases --mem device: what the staged chunks' timeline (inter_node/staging_pipeline.h)
// says about one call, summarised over the timed calls: when each stage first started and last
// ended, how long it was busy, and for how much of the transfer (the network stage's span) the copy
// to the host, the network and the reduction (the copy to the device where nothing is reduced) were
// all under way.
#pragma once

#include <cstddef>
#include <vector>

#include "inter_node/executor.h"

namespace strata::perf {

struct StageSummary {
  bool any = false;  // some chunk was staged
  double first[StageTimeline::kStages] = {}, last[StageTimeline::kStages] = {};  // ms since the call began
  double busy[StageTimeline::kStages] = {};   // ms in which some interval of the stage was open
  double bytes[StageTimeline::kStages] = {};  // bytes the stage moved (reduce: bytes of output)
  double intervals[StageTimeline::kStages] = {};
  int third = StageTimeline::kReduce;  // the stage after the network that the overlap counts
  double staged = 0;       // ms from the first stage's start to the last one's end
  double transfer = 0;     // ms the network stage spans (first start to last end)
  double spanOverlap = 0;  // fraction of the transfer inside all three stages' [first, last]
  double stagedOverlap = 0;  // the same time as a fraction of `staged`
  double busyOverlap = 0;  // fraction of `staged` with an interval of each of the three open
};

// One call's timeline on this rank.
StageSummary summarizeStages(const StageTimeline& t);
// Over the timed calls (collective over MPI_COMM_WORLD): per call the busiest rank's times and the
// least overlap of any rank, then the median over the calls.
StageSummary medianStages(const std::vector<PhaseTimes>& runs);
// Rank 0 prints it under the row.
void printStages(const StageSummary& s);

}  // namespace strata::perf
