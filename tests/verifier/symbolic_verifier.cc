#include "tests/verifier/symbolic_verifier.h"

#include "tests/verifier/simulator.h"

namespace strata::verify {

CollectiveArgs rankArgs(const CollectiveArgs& a, int rank) {
  CollectiveArgs r = a;
  if (isRooted(a.coll) && rank != a.root) r.inPlace = false;
  if (a.coll == Collective::kBarrier) r.inPlace = false;
  return r;
}

View sendView(const CollectiveArgs& a, int rank) {
  if (!a.inPlace) return {BufferId::kSend, 0};
  const InPlaceAlias alias = inPlaceAlias(a, rank);
  return alias.sendInsideRecv ? View{BufferId::kRecv, alias.offset} : View{BufferId::kSend, 0};
}

View recvView(const CollectiveArgs& a, int rank) {
  if (!a.inPlace) return {BufferId::kRecv, 0};
  const InPlaceAlias alias = inPlaceAlias(a, rank);
  return alias.sendInsideRecv ? View{BufferId::kRecv, 0} : View{BufferId::kSend, alias.offset};
}

size_t sendElems(const CollectiveArgs& a, int rank) {
  const BufferUse u = sendUse(a, rank);
  return u.used ? u.elems : 0;  // a plan that reads an insignificant buffer reads out of range
}

size_t recvElems(const CollectiveArgs& a, int rank) {
  // Exscan's rank 0 passes a receive buffer all the same, which must stay untouched: it is checked.
  const BufferUse u = recvUse(a, rank);
  return u.used || specOf(a.coll).recvHolders == Holders::kAllButRankZero ? u.elems : 0;
}

const CollectiveArgs& Case::argsOf(int rank) const {
  return perRank.empty() ? args : perRank[static_cast<size_t>(rank)];
}

Result run(const Case& c) {
  detail::Simulator sim(c);
  return sim.run();
}

}  // namespace strata::verify
