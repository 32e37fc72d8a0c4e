#include "kernels/plan/selection.h"

namespace strata {

CollectiveArgs selectionArgs(const CollectiveArgs& args) {
  CollectiveArgs a = args;
  a.inPlace = false;
  switch (args.coll) {
    case Collective::kAllGatherv:
    case Collective::kReduceScatterv: {
      size_t total = 0;
      for (size_t c : args.counts) total += c;
      a.count = args.counts.empty() ? 0 : total / args.counts.size();
      break;
    }
    case Collective::kGatherv:
    case Collective::kScatterv:
    case Collective::kAllToAllv:
      a.count = 0;
      a.counts.clear();
      a.displs.clear();
      a.sendCounts.clear();
      a.sendDispls.clear();
      break;
    default: break;
  }
  return a;
}

LevelCosts callCosts(const LevelCosts& costs, const CollectiveArgs& args, int hostProcesses) {
  CollectiveArgs shared = selectionArgs(args);
  const double outOfPlace = hostProcesses * rankWorkingSetBytes(shared);
  shared.inPlace = args.inPlace;
  LevelCosts out = args.inPlace ? costs.forWorkingSet(outOfPlace, hostProcesses * rankWorkingSetBytes(shared))
                                : costs.forWorkingSet(outOfPlace);
  const bool oneHost = args.commSize > 1 && hostProcesses >= args.commSize;
  out.flat.oneHost = out.flat.oneHost || oneHost;
  out.lane.oneHost = out.lane.oneHost || oneHost;
  return out;
}

}  // namespace strata
