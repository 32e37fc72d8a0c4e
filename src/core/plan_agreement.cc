#include "src/core/plan_agreement.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "inter_node/mpi_check.h"
#include "src/core/communicator.h"

namespace strata {

namespace {

// What every rank must agree on. The in-place flag and the v-variants' arrays are left out, but for
// the receive counts of allgatherv and reduce-scatterv: MPI and Strata let the rest differ between
// ranks (displacements describe each rank's own buffer, gatherv's and scatterv's arrays matter at
// the root only, alltoallv's are each rank's own, only the root of gather passes its buffer in
// place).
struct Digest {
  uint64_t algorithm = 0;  // FNV-1a of the chosen algorithm's name
  uint64_t count = 0;
  uint64_t counts = 0;  // allgatherv and reduce-scatterv: FNV-1a of recvcounts, the same on every rank
  int32_t coll = 0;
  int32_t type = 0;
  int32_t op = 0;
  int32_t root = 0;
  int32_t shift = 0;
  int32_t device = 0;
};

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

Digest digestOf(const CollectiveArgs& a, const std::string& algorithm) {
  Digest d;
  d.algorithm = fnv1a(algorithm);
  // The v-variants' counts are per rank (and their arrays significant at the root only).
  const bool irregular = isIrregular(a.coll);
  d.count = irregular ? 0 : a.count;
  if (a.coll == Collective::kAllGatherv || a.coll == Collective::kReduceScatterv) {
    d.counts = fnv1a(std::string(reinterpret_cast<const char*>(a.counts.data()), a.counts.size() * sizeof(a.counts[0])));
  }
  d.coll = static_cast<int32_t>(a.coll);
  d.type = static_cast<int32_t>(a.type);
  d.op = isReduction(a.coll) ? static_cast<int32_t>(a.op) : 0;
  d.root = isRooted(a.coll) ? a.root : 0;
  d.shift = a.coll == Collective::kShift ? a.shift : 0;
  d.device = a.device ? 1 : 0;
  return d;
}

// One rank's side of the agreement's allgather.
struct Exchange {
  Digest mine;
  std::vector<Digest> all;
  MPI_Request request = MPI_REQUEST_NULL;
};

// How `theirs` differs from `mine`, in words.
std::string difference(const Digest& mine, const Digest& theirs) {
  auto space = [](int32_t device) { return device != 0 ? "device" : "host"; };
  if (mine.device != theirs.device) {
    return strformat("passed %s buffers where this rank passed %s buffers (every rank of a call must use the same "
                     "memory space; a rank without elements passes a pointer in that space, not NULL)",
                     space(theirs.device), space(mine.device));
  }
  if (mine.coll != theirs.coll) {
    return strformat("called %s where this rank called %s", collectiveName(static_cast<Collective>(theirs.coll)),
                     collectiveName(static_cast<Collective>(mine.coll)));
  }
  if (mine.count != theirs.count) {
    return strformat("passed count %llu where this rank passed %llu", static_cast<unsigned long long>(theirs.count),
                     static_cast<unsigned long long>(mine.count));
  }
  if (mine.counts != theirs.counts) {
    return "passed other recvcounts than this rank (an allgatherv or reduce-scatterv takes the same on every rank)";
  }
  if (mine.type != theirs.type) {
    return strformat("passed type %s where this rank passed %s", dataTypeName(static_cast<DataType>(theirs.type)),
                     dataTypeName(static_cast<DataType>(mine.type)));
  }
  if (mine.op != theirs.op) {
    return strformat("passed op %s where this rank passed %s", redOpName(static_cast<RedOp>(theirs.op)),
                     redOpName(static_cast<RedOp>(mine.op)));
  }
  if (mine.root != theirs.root) return strformat("passed root %d where this rank passed %d", theirs.root, mine.root);
  if (mine.shift != theirs.shift) return strformat("passed shift %d where this rank passed %d", theirs.shift, mine.shift);
  return "chose another algorithm (STRATA_ALGO, STRATA_TOPO_FILE or the node shape differ between ranks)";
}

}  // namespace

Status agreeOnPlan(strataComm* comm, const CollectiveArgs& args, const std::string& algorithm) {
  if (comm->size == 1) return Status::Ok();
  const Digest mine = digestOf(args, algorithm);
  // Once per call shape: every rank builds a plan at the first call of each shape (the in-place
  // flag, which may differ between ranks, is not part of it), so all ranks take part together.
  Digest shape = mine;
  shape.algorithm = 0;
  const uint64_t key = fnv1a(std::string(reinterpret_cast<const char*>(&shape), sizeof shape));
  if (comm->agreedCalls.count(key) != 0) return Status::Ok();
  // On the heap: a wait that times out or is aborted leaves the nonblocking allgather pending (it
  // cannot be cancelled), and MPI may still write these buffers after this call returned.
  auto exchange = std::make_unique<Exchange>();
  exchange->mine = mine;
  exchange->all.resize(static_cast<size_t>(comm->size));
  STRATA_CHECK_MPI(MPI_Iallgather(&exchange->mine, sizeof(Digest), MPI_BYTE, exchange->all.data(), sizeof(Digest),
                                  MPI_BYTE, comm->agreeComm, &exchange->request));
  int done = 0;
  Status tested;
  const Status waited = waitUntil(
      comm->wait,
      [&] {
        const int rc = MPI_Test(&exchange->request, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) tested = mpiError("MPI_Test", rc, STRATA_WHERE);
        return done != 0 || !tested.ok();
      },
      [&] {
        return strformat("every rank to build its plan for %s: a rank runs a plan cached for another memory space "
                         "or call, or never made this call", collectiveName(args.coll));
      });
  if (!tested.ok() || !waited.ok()) {
    // The allgather is still pending: its buffers are left to it (a few bytes per rank, once), and
    // the communicator is unusable afterwards.
    exchange.release();
    return failComm(comm, !tested.ok() ? tested : waited);
  }
  for (int r = 0; r < comm->size; ++r) {
    const Digest& theirs = exchange->all[static_cast<size_t>(r)];
    if (std::memcmp(&theirs, &mine, sizeof(Digest)) != 0) {
      comm->callFailedAlike = true;  // every rank saw every digest: each refuses the call itself
      return makeStatus(strataInvalidUsage, "%s: rank %d %s", collectiveName(args.coll), r,
                        difference(mine, theirs).c_str());
    }
  }
  // Bounded by its own size, which grows alike on every rank (the plan cache's does not).
  if (comm->agreedCalls.size() >= 65536) comm->agreedCalls.clear();
  comm->agreedCalls.insert(key);
  return Status::Ok();
}

}  // namespace strata
