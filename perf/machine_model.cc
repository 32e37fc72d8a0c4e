#include "perf/machine_model.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "kernels/plan/selection.h"

namespace strata::perf {

Machine Machine::forCall(const CollectiveArgs& args) const {
  Machine c = *this;
  // As the tuner prices the call as made (src/tuning/tuner.cc, candidatesFor).
  static_cast<LevelCosts&>(c.costs) = callCosts(costs, args, hostProcesses());
  return c;
}

int Machine::coreSlots() const {
  if (coreBandwidth <= 0 || nicBandwidth <= 0) return 0;
  // Never more than every NIC's message at once, past which the core limits nothing.
  const double nics = static_cast<double>(nodes) * nicsPerNode;
  return static_cast<int>(std::clamp(std::floor(coreBandwidth / nicBandwidth * (1 + 1e-12)), 1.0, nics));
}

double Machine::coreRate() const { return coreSlots() > 0 ? std::min(nicBandwidth, coreBandwidth) : 0; }

CostParams Machine::formulaCosts() const {
  CostParams c = costs;
  if (coreBandwidth <= 0) return c;
  c.lane = c.lane.withCore(ranks() / coreBandwidth);  // each rank's part, every rank sending across it
  c.flat = c.flat.withCore(nodes / coreBandwidth);    // each node's, one rank of each sending across it
  c.flat.coreNodeRanks = ranksPerNode;                // a round's own crossings: LinkCost::crossing
  return c;
}

Status loadMachine(const std::string& path, Machine* out) {
  Machine m;
  STRATA_CHECK(loadCostParams(path, &m.costs));
  std::ifstream in(path);
  std::string line;
  int lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    std::istringstream fields(line);
    std::string key;
    double value = 0;
    if (line.empty() || line[0] == '#' || !(fields >> key >> value) || key.rfind("machine.", 0) != 0) continue;
    const std::string field = key.substr(8);
    const bool whole = value == std::floor(value) && value >= 1 && value <= 1e7;
    if (field == "nodes" && whole) m.nodes = static_cast<int>(value);
    else if (field == "ranks_per_node" && whole) m.ranksPerNode = static_cast<int>(value);
    else if (field == "nics_per_node" && whole) m.nicsPerNode = static_cast<int>(value);
    else if (field == "nic_bandwidth") m.nicBandwidth = value;
    else if (field == "core_bandwidth") m.coreBandwidth = value;
    else if (field == "eager_bytes") m.eagerBytes = value;
    else if (field == "ranks_per_host" && whole) m.ranksPerHost = static_cast<int>(value);
    else return makeStatus(strataInvalidArgument, "%s:%d: unknown or invalid machine key '%s'", path.c_str(), lineNo, line.c_str());
  }
  m.source = path;
  STRATA_CHECK(checkMachine(m));
  *out = m;
  return Status::Ok();
}

Status checkMachine(const Machine& m) {
  STRATA_REQUIRE(m.nodes >= 1 && m.ranksPerNode >= 1, strataInvalidArgument, "a machine needs at least one node of one rank");
  STRATA_REQUIRE(static_cast<double>(m.nodes) * m.ranksPerNode <= 1 << 20, strataInvalidArgument,
                 "%d x %d ranks: at most 2^20", m.nodes, m.ranksPerNode);
  STRATA_REQUIRE(m.nicsPerNode >= 1 && m.nicsPerNode <= m.ranksPerNode, strataInvalidArgument,
                 "machine.nics_per_node %d: between 1 and ranks_per_node (%d)", m.nicsPerNode, m.ranksPerNode);
  STRATA_REQUIRE(m.nicBandwidth >= 0 && m.eagerBytes >= 0, strataInvalidArgument, "negative NIC bandwidth or eager size");
  STRATA_REQUIRE(m.coreBandwidth >= 0, strataInvalidArgument, "machine.core_bandwidth %g: negative", m.coreBandwidth);
  STRATA_REQUIRE(m.coreBandwidth == 0 || m.nicBandwidth > 0, strataInvalidArgument,
                 "machine.core_bandwidth %g needs machine.nic_bandwidth: the core carries what the NICs send",
                 m.coreBandwidth);
  return Status::Ok();
}

CollectiveArgs sweepCall(Collective coll, DataType type, RedOp op, size_t bytes, int p) {
  CollectiveArgs a;
  a.coll = coll;
  a.type = type;
  a.op = op;
  a.commSize = p;
  const CollectiveSpec& spec = specOf(coll);
  const bool perRankBlocks = spec.sendLength == Length::kBlocks || spec.recvLength == Length::kBlocks;
  a.count = bytes / dataTypeSize(type) / (perRankBlocks ? static_cast<size_t>(p) : 1);
  a.shift = 1;  // strata-perf's default: to the next rank
  return a;
}

}  // namespace strata::perf
