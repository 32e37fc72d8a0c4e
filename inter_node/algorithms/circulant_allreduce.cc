// Circulant allreduce (Bar-Noy, Kipnis, Schieber; Bruck, Ho; 002, "Beyond the butterfly:
// Allreduce in fully-connected networks"): ceil(log2 p) rounds for any p. With the bits b_0 (most
// significant, always 1) ... b_{k-1} of p-1 and n_j = 2 n_{j-1} + b_j, rank i keeps
// S1 = B_{i-n} + ... + B_i and S0 = B_{i-n} + ... + B_{i-1}; in round j it sends S1 to i+n+1 and
// receives from i-n-1 when b_j = 1, else sends S0 to i+n and receives from i-n, and adds what it
// received to both. After the last round n = p-1 and S1 is the full reduction. Commutative
// operators only (all of Strata's); ranks add in different orders, so the tuner does not pick it
// for floating-point sums on its own.
//   T(m) = ceil(log2 p)(alpha + beta m + gamma m) + (z - 1) gamma m + copy m      (z > 0)
// z: the rounds that keep S0, those followed by a round whose bit is 0; the first copies it, the
// others add to it. Where p is a power of two p - 1 is all ones, z = 0 and S0 costs nothing.
#include <algorithm>

#include "inter_node/algorithms/algorithm.h"

namespace strata {
namespace {

void build(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions&) {
  const int p = g.size();
  const Slice input{BufferId::kSend, 0, a.count};
  const Slice s1{BufferId::kRecv, 0, a.count};
  if (p == 1) {
    b.label("circulant", 0);
    b.copy(s1, input);
    divideIfAverage(b, a, s1);
    return;
  }
  std::vector<int> bits;  // of p-1, most significant first
  for (int v = p - 1; v > 0; v >>= 1) bits.insert(bits.begin(), v & 1);
  const Slice s0 = b.scratch(a.count);
  const Slice received = b.scratch(a.count);
  Slice cur1 = input;
  bool haveS0 = false;
  int n = 0;
  for (size_t j = 0; j < bits.size(); ++j) {
    b.label("circulant", static_cast<int>(j));
    const int dist = bits[j] ? n + 1 : n;
    b.send(g.relative(dist), bits[j] ? cur1 : s0, static_cast<int>(j));
    b.recv(g.relative(-dist), received, static_cast<int>(j));
    // S0 is needed only if a later round sends it.
    bool laterZero = false;
    for (size_t l = j + 1; l < bits.size(); ++l) laterZero |= bits[l] == 0;
    if (laterZero) {
      if (!haveS0) b.copy(s0, received);
      else b.reduce(s0, {s0, received});
      haveS0 = true;
    }
    b.reduce(s1, {cur1, received});
    cur1 = s1;
    n = 2 * n + bits[j];
  }
  divideIfAverage(b, a, s1);
}

// Every round sends, receives and adds to S1; a round followed by one that sends S0 also keeps S0
// (the first time a copy, then an addition).
double cost(const CollectiveArgs& a, int p, const LinkCost& c) {
  const double m = callBytes(a);
  if (p <= 1) return 0;
  std::vector<int> bits;  // of p-1, most significant first
  for (int v = p - 1; v > 0; v >>= 1) bits.insert(bits.begin(), v & 1);
  double t = 0;
  bool haveS0 = false;
  int n = 0;
  for (size_t j = 0; j < bits.size(); ++j) {
    const LinkCost k = shiftRound(c, p, bits[j] ? n + 1 : n);  // the round's distance, as built
    t += k.alpha + k.beta * m + k.gamma * m;
    n = 2 * n + bits[j];
    if (std::find(bits.begin() + static_cast<std::ptrdiff_t>(j) + 1, bits.end(), 0) != bits.end()) {
      t += haveS0 ? c.gamma * m : c.copy * m;
      haveS0 = true;
    }
  }
  return t;
}

}  // namespace

extern const FlatAlgorithm kCirculantAllReduce = {"circulant", Collective::kAllReduce, nullptr, build, cost,
                                                  "ceil(log p)(a + b m + g m) + (z-1) g m + c m", rankOrderDependent};

}  // namespace strata
