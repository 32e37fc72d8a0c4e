#include "src/tuning/device_model.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace strata {

Status loadDeviceParams(const std::string& path, DeviceNodeParams* out) {
  DeviceNodeParams p;
  if (path.empty()) {
    *out = p;
    return Status::Ok();
  }
  std::ifstream in(path);
  STRATA_REQUIRE(in.good(), strataInvalidArgument, "cannot read the device parameter file '%s' (STRATA_DEVICE_PARAMS)",
                 path.c_str());
  const struct {
    const char* key;
    double DeviceNodeParams::*field;
  } keys[] = {{"hbm_bytes_per_s", &DeviceNodeParams::hbmBytesPerSecond},
              {"link_bytes_per_s", &DeviceNodeParams::linkBytesPerSecond},
              {"link_efficiency", &DeviceNodeParams::linkEfficiency},
              {"pcie_bytes_per_s", &DeviceNodeParams::pcieBytesPerSecond},
              {"launch_s", &DeviceNodeParams::launchSeconds},
              {"flag_s", &DeviceNodeParams::flagSeconds},
              {"nccl_ring_busbw", &DeviceNodeParams::ncclRingBusBytesPerSecond},
              {"nccl_nvls_busbw", &DeviceNodeParams::ncclNvlsBusBytesPerSecond}};
  std::string line;
  for (int lineNo = 1; std::getline(in, line); ++lineNo) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string key, rest;
    double value = 0;
    if (!(fields >> key >> value) || (fields >> rest) || !std::isfinite(value) || value < 0) {
      return makeStatus(strataInvalidArgument, "%s:%d: expected 'key value' (a finite value >= 0), got '%s'",
                        path.c_str(), lineNo, line.c_str());
    }
    bool known = false;
    for (const auto& k : keys) {
      if (key == k.key) p.*k.field = value, known = true;
    }
    STRATA_REQUIRE(known, strataInvalidArgument, "%s:%d: unknown key '%s'", path.c_str(), lineNo, key.c_str());
  }
  STRATA_REQUIRE(p.hbmBytesPerSecond > 0 && p.linkBytesPerSecond > 0 && p.linkEfficiency > 0 &&
                     p.linkEfficiency <= 1 && p.pcieBytesPerSecond > 0,
                 strataInvalidArgument, "%s: bandwidths must be > 0 and the link efficiency in (0, 1]", path.c_str());
  p.source = path;
  *out = p;
  return Status::Ok();
}

double predictSeconds(const DeviceTraffic& t, const DeviceNodeParams& p) {
  const double link = t.linkBytes / (p.linkBytesPerSecond * p.linkEfficiency);
  const double hbm = t.localBytes / p.hbmBytesPerSecond;
  const double host = t.hostBytes / p.pcieBytesPerSecond;
  return t.launches * p.launchSeconds + t.barriers * p.flagSeconds + std::max({link, hbm, host});
}

double linkLowerBound(Collective c, int ranks, double bytes) {
  return ranks <= 1 ? 0 : specOf(c).busFactor(ranks) * bytes;
}

DeviceTraffic peerTraffic(PeerAlgorithm a, int ranks, double bytes, double rounds) {
  const double n = ranks, m = bytes;
  DeviceTraffic t;
  t.launches = 1;
  t.barriers = rounds;
  switch (a) {
    case PeerAlgorithm::kAllReduceOneShot:
      // Copy in (read and write m), read my half and n - 1 peers', write the output.
      t.linkBytes = (n - 1) * m;
      t.localBytes = 4 * m;
      break;
    case PeerAlgorithm::kAllReduceTwoShot:
      // Copy in; reduce my n-th from every half into the result area and the output; gather the
      // other n-ths.
      t.linkBytes = 2 * (n - 1) / n * m;
      t.localBytes = 2 * m + m / n + 2 * m / n + (n - 1) / n * m;
      t.barriers = 2 * rounds;
      break;
    case PeerAlgorithm::kReduceScatter:
      t.linkBytes = (n - 1) / n * m;
      t.localBytes = 2 * m + 2 * m / n;
      break;
    case PeerAlgorithm::kAllGather:
      t.linkBytes = (n - 1) / n * m;
      t.localBytes = 2 * m / n + 2 * m / n + (n - 1) / n * m;
      break;
    case PeerAlgorithm::kBroadcast:
      t.linkBytes = m;  // a receiving rank; the root's links carry (n - 1) m outwards
      t.localBytes = m;
      break;
  }
  return t;
}

PeerAlgorithm choosePeerAllReduce(int ranks, double bytes, double halfBytes, const DeviceNodeParams& p) {
  const double n = ranks;
  const double oneRounds = std::max(1.0, std::ceil(bytes / halfBytes));
  const double twoRounds = std::max(1.0, std::ceil(bytes / (halfBytes * n / (n + 1))));
  const double one = predictSeconds(peerTraffic(PeerAlgorithm::kAllReduceOneShot, ranks, bytes, oneRounds), p);
  const double two = predictSeconds(peerTraffic(PeerAlgorithm::kAllReduceTwoShot, ranks, bytes, twoRounds), p);
  return two < one ? PeerAlgorithm::kAllReduceTwoShot : PeerAlgorithm::kAllReduceOneShot;
}

}  // namespace strata
