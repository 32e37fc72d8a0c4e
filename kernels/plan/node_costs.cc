#include "kernels/plan/node_costs.h"

#include <algorithm>
#include <cmath>

namespace strata {

namespace {

// Rounds of a node op that puts `shared` bytes per member through a 256 KiB slot (the segment
// grows to that size for large ops).
double rounds(double shared) { return std::max(1.0, std::ceil(shared / double(256 << 10))); }

}  // namespace

// Every node op is priced by what its busiest member does: beta for each byte it copies into its
// slot and for each byte it writes into its own buffers (a copy out of a peer's slot, or a
// reduction's result), gamma for each input byte it reduces (reading the peers' parts is part of
// the reduction). Counting the result's writes matters: a one-shot allreduce writes all m bytes on
// every member, a reduce-scatter m/n.
double nodeReduceScatterCost(double m, int n, const LinkCost& c) {
  if (n <= 1) return c.beta * m;
  const double shared = m * (n - 1) / n;
  return rounds(shared) * c.alpha + c.beta * (shared + m / n) + c.gamma * m;
}
double nodeAllGatherCost(double m, int n, const LinkCost& c) {
  if (n <= 1) return 0;
  return rounds(m / n) * c.alpha + c.beta * (m / n + m * (n - 1) / n);
}
double nodeBroadcastCost(double m, int n, const LinkCost& c) {
  if (n <= 1) return c.beta * m;
  return rounds(m) * c.alpha + 2 * c.beta * m;
}
double nodeReduceCost(double m, int n, const LinkCost& c) {
  if (n <= 1) return c.beta * m;
  return rounds(m) * c.alpha + 2 * c.beta * m + c.gamma * m * n;
}
double nodeAllReduceCost(double m, int n, const LinkCost& c) { return nodeReduceCost(m, n, c); }
double nodeGatherCost(double m, int n, const LinkCost& c) {
  if (n <= 1) return c.beta * m;
  return rounds(m / n) * c.alpha + c.beta * (m / n + m * (n - 1) / n);
}
double nodeAllToAllCost(double m, int n, const LinkCost& c) {
  if (n <= 1) return c.beta * m;
  const double shared = m * (n - 1) / n;
  return rounds(shared) * c.alpha + 2 * c.beta * shared + c.beta * m / n;
}
double nodeScanCost(double m, int n, const LinkCost& c) {
  if (n <= 1) return c.beta * m;
  return rounds(m) * c.alpha + 2 * c.beta * m + c.gamma * m * n;
}
double nodeBarrierCost(int n, const LinkCost& c) { return n <= 1 ? 0 : c.alpha; }

}  // namespace strata
