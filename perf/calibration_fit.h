// The fit of strata-perf --calibrate: a level's alpha and its curve of beta and gamma over the
// working set from measured samples, each sample's coefficients being its cost formula evaluated
// with unit parameters (perf/calibrate.cc measures them), and the level's costs when only a share
// of the host's processes is busy, as fractions of its busy costs.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "kernels/plan/cost.h"
#include "kernels/plan/peer_reads.h"

namespace strata::perf {

struct Sample {
  std::array<double, 3> coef;  // seconds per unit of alpha, beta, gamma
  double seconds;              // measured median (slowest rank of the whole job), less `fixed`
  size_t bytes;
  double workingSet;  // bytes: the host's processes' send and receive buffers
  std::string what;
  // Bytes the formula copies within a rank (an allgather's own block; on one node, a full-lane
  // composition's lane of one member), priced at LinkCost::copy, and the seconds they cost at the
  // copy curve calibration measured (the level's own, or the flat level's for the node level, as
  // LevelCosts::forWorkingSet prices them): left out of this level's fit (`seconds` is the rest)
  // and added back to report the sample.
  double copyBytes = 0;
  double fixed = 0;
  bool inPlace = false;  // timed in place (its formula's coefficients are the out-of-place call's)
  // Not a call: `copyBytes` copied within each rank from its send buffer into its receive buffer,
  // every process of the host copying at once, beside the call whose working set it takes (an
  // allgather out of place, whose own block it is). It tells the copy's cost per byte there
  // (separateCopies) and is no sample of the level's formulas.
  bool copyOnly = false;
  // A copyOnly sample: the time of the call whose copy it is (0: not known). A copy timed longer
  // than the whole call that makes it measured something else, and tells no cost (separateCopies).
  double callSeconds = 0;
  RewrittenBytes rewritten;  // what its plan writes where a peer read it (kernels/plan/peer_reads.h)
  // A sample timed alone whose formula prices its phases' host shares itself (a node reduce: the
  // root's side at the alone share, the members' at (n-1)/n): the coefficients of what it costs
  // with the level's alone costs at nothing. Its price is then linear in the alone ratio r,
  // coefZero + r (coef - coefZero), which is what fitAlone fits. Zero where the whole call runs
  // at the alone share (a lane or a pair of ranks alone).
  std::array<double, 3> coefZero{0, 0, 0};
  int call = -1;  // the caller's index of the call timed (strata-perf --calibrate prices it again)
};

// The busy sample's price at the fitted level: its formula's coefficients at the level's costs for
// its working set, and its copies (`fixed`).
double fittedPrice(const Sample& s, const LinkCost& fitted);

// Per size of the curve (from 32 KiB up), the copy per byte within a rank that an allgather out of
// place makes of its own block, from that copy timed on its own at the call's working set until
// every process of the host has copied (the copyOnly samples, which leave `samples`). Not the call
// out of place against in place: in place its working set is smaller, and where that crosses a
// cache's size the difference holds the whole call's slowing, not the copy's (2 ranks on the Zen 5 VM, 32 MiB of L3: a 16 MiB ring
// allgather 1320 us out of place, 708 in place, 612 us for its 8 MiB copy where the copy on its
// own took 206; the node's full-lane allgather, less that copy, then priced a leader allgather at
// 644 us against 1314 measured). Every sample whose formula copies then pays its bytes at that
// cost (interpolated in log working set between the sizes that told it, held beyond them) as
// `fixed`, taken out of `seconds`. Returns the copy per byte by working set, empty where no copy
// was timed (the samples are left alone).
std::map<double, double> separateCopies(std::vector<Sample>* samples);
// The fitted level's curve carries those copy costs at its points (interpolated as above); it
// carries none where `copies` is empty.
void attachCopies(LinkCost* fitted, const std::map<double, double>& copies);

// The level's parameters. Each size from 32 KiB up is a point of the curve: its beta and gamma
// from that size's samples alone (a reduce-scatter and an allgather move the same bytes by
// formulas whose alpha and beta terms agree, and the reduce-scatter also reduces them), so the
// level's speed may change from size to size as the machine's caches make it. Alpha comes from the
// smaller sizes with the curve held; three times round. Where a size's samples include algorithms
// of different step counts for the same bytes (a ring and recursive doubling on more than 2 ranks)
// and alpha is a quarter of its time or more, that size fits its own alpha too (within 1/4 to 4x the
// small sizes'), and the curve carries alpha: the small sizes' up to the largest of them, each
// such size's, held from the last one to the end.
// The result's beta and gamma are its curve's first point's.
LinkCost fitLevel(const std::vector<Sample>& samples);
// The level measured alone (`alone`: the share `share` of the host's processes busy; each
// sample's working set that of the call with every process busy, as the busy samples') against
// its busy fit: alpha, and beta and gamma per working set, as fractions of the busy ones (and
// alpha per working set where the busy curve carries alpha: the small sizes' alpha alone, over the
// busy alpha there).
HostShare fitAlone(const std::vector<Sample>& alone, const LinkCost& busy, double share);
// Which of a level's rewrite costs a fitted curve is: a reduction's (LinkCost::rewrite) or a
// copy's (LinkCost::copyRewrite).
enum class Rewrite { kReduction, kCopy };
// A rewrite cost over the working set from pairs of samples at each size that rewrite different
// bytes of its kind (the recursive-doubling allreduce out of place and in place: a reduction's; the
// ring and the Bruck allgather, their other copies paid: a copy's): the difference of their times
// over the difference of the bytes rewritten, at least 0 (in place may also run faster for its smaller
// working set, where the lines have left the caches anyway), in each point's `rewrite`. Empty
// without such pairs.
BandwidthCurve fitRewrite(const std::vector<Sample>& samples, Rewrite kind);
// Puts the fitted `rewrite` into `level` as that cost: read at each point of its curve (or at the
// first point's working set of `rewrite` where the level has no curve). An empty fit leaves it.
void setRewrite(const BandwidthCurve& rewrite, LinkCost* level, Rewrite kind);
// The curve with each point but the two ends set to the median of its own and its two neighbours'
// values, field by field (beta, gamma, and alpha and the rewrites where it carries them; not the
// copy, whose measured costs separateCopies smooths so before the samples pay them, the curve then
// carrying the same).
// Each point is fitted from its own size's samples alone, so one size measured while the host's
// processes had moved (the VM's vCPUs change cores from minute to minute) gave a point its
// neighbours disagree with, and a call whose working set falls there was priced by it alone: on
// the Zen 4 VM a 2x4 node broadcast of 128 KiB priced 92 us and one of 256 KiB 81, one of 1 MiB
// 720 where the leader broadcast around it measured 423 us whole. A step that two points or more
// agree on (a cache's size) stays. Repricing three stored fidelity runs of 7 rounds each
// (perf/fidelity.sh --reprice) with their curves so smoothed: predicted within 15% in 33, 34
// and 32 of 40 cells against 32, 32 and 31, and the tuner's choice within 10% of the fastest in
// 34, 33 and 34 against 33, 33 and 32.
void smoothCurve(BandwidthCurve* curve);
// Prints the rewrite costs by the working set and the pairs they came from.
void reportRewrite(const char* level, const LinkCost& fitted, const std::vector<Sample>& reductions,
                   const std::vector<Sample>& copies);
// Prints the fitted parameters and, per sample, the measurement against the fitted model; the
// alone samples priced at the level's share (fitted.alone).
void report(const char* level, const LinkCost& fitted, const std::vector<Sample>& samples);
void reportAlone(const char* level, const LinkCost& fitted, const std::vector<Sample>& samples);

}  // namespace strata::perf
