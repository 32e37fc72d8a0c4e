// The irregular (v) collectives: strataAllGatherv, strataGatherv, strataScatterv,
// strataAlltoAllv, strataReduceScatterv. Their counts and displacements are validated here
// (present where significant, consistent with the rank's own count, no overflowing extents, no
// overlapping blocks in an output buffer) before anything is read or written.
#include <strata/strata.h>

#include <algorithm>

#include "src/api/api_common.h"
#include "src/core/collective_runner.h"

using strata::Collective;
using strata::CollectiveArgs;
using strata::Status;

namespace {

bool addOverflows(size_t a, size_t b, size_t* out) { return __builtin_add_overflow(a, b, out); }

// The element extent of blocks (counts, displs); checks overflow and, for an output, overlaps.
Status blockExtent(const char* what, const std::vector<size_t>& counts, const std::vector<size_t>& displs,
                   bool isOutput, size_t elemSize, size_t* extent) {
  *extent = 0;
  std::vector<std::pair<size_t, size_t>> spans;
  for (size_t j = 0; j < counts.size(); ++j) {
    size_t end = 0, bytes = 0;
    if (addOverflows(displs[j], counts[j], &end) || __builtin_mul_overflow(end, elemSize, &bytes) ||
        bytes > static_cast<size_t>(PTRDIFF_MAX)) {
      return strata::makeStatus(strataInvalidArgument, "%s: block %zu (displacement %zu, count %zu) overflows the addressable size",
                                what, j, displs[j], counts[j]);
    }
    *extent = std::max(*extent, end);
    if (counts[j] != 0) spans.push_back({displs[j], end});
  }
  if (isOutput) {
    std::sort(spans.begin(), spans.end());
    for (size_t k = 1; k < spans.size(); ++k) {
      STRATA_REQUIRE(spans[k].first >= spans[k - 1].second, strataInvalidArgument,
                     "%s: output blocks [%zu, %zu) and [%zu, %zu) overlap", what, spans[k - 1].first,
                     spans[k - 1].second, spans[k].first, spans[k].second);
    }
  }
  return Status::Ok();
}

std::vector<size_t> copyArray(const size_t* a, int n) { return std::vector<size_t>(a, a + n); }

std::vector<size_t> packedDispls(const std::vector<size_t>& counts) {
  std::vector<size_t> d(counts.size());
  size_t pos = 0;
  for (size_t j = 0; j < counts.size(); ++j) {
    d[j] = pos;
    pos += counts[j];
  }
  return d;
}

// Validates the call, fills the arrays into `args`, and runs it.
strataResult_t runIrregular(const char* function, strataComm_t comm, CollectiveArgs args, const void* send, void* recv,
                            cudaStream_t stream, const size_t* counts, const size_t* displs, const size_t* sendCounts,
                            const size_t* sendDispls) {
  return strata::api::collective(comm, function, [&](strataComm* c) -> Status {
    const int p = c->size, me = c->rank;
    args.commSize = p;
    STRATA_REQUIRE(strata::isValidDataType(args.type), strataInvalidArgument, "invalid datatype %d", static_cast<int>(args.type));
    if (strata::isRooted(args.coll)) {
      STRATA_REQUIRE(args.root >= 0 && args.root < p, strataInvalidArgument,
                     "root %d is not a rank of this %d-rank communicator", args.root, p);
    }
    const bool isRoot = me == args.root;
    const size_t es = args.elemSize();
    size_t extent = 0;  // blockExtent's check of the arrays; the buffers' lengths are the table's
    switch (args.coll) {
      case Collective::kAllGatherv:
        STRATA_REQUIRE(counts && displs, strataInvalidArgument, "recvcounts and displs must not be NULL");
        args.counts = copyArray(counts, p);
        args.displs = copyArray(displs, p);
        STRATA_REQUIRE(args.count == args.counts[static_cast<size_t>(me)], strataInvalidArgument,
                       "sendcount %zu differs from recvcounts[%d] = %zu", args.count, me, args.counts[static_cast<size_t>(me)]);
        STRATA_CHECK(blockExtent("recvcounts/displs", args.counts, args.displs, true, es, &extent));
        break;
      case Collective::kGatherv:
        if (isRoot) {
          STRATA_REQUIRE(counts && displs, strataInvalidArgument, "recvcounts and displs must not be NULL at the root");
          args.counts = copyArray(counts, p);
          args.displs = copyArray(displs, p);
          STRATA_REQUIRE(args.count == args.counts[static_cast<size_t>(me)], strataInvalidArgument,
                         "sendcount %zu differs from recvcounts[%d] = %zu at the root", args.count, me,
                         args.counts[static_cast<size_t>(me)]);
          STRATA_CHECK(blockExtent("recvcounts/displs", args.counts, args.displs, true, es, &extent));
        }
        break;
      case Collective::kScatterv:
        if (isRoot) {
          STRATA_REQUIRE(sendCounts && sendDispls, strataInvalidArgument, "sendcounts and displs must not be NULL at the root");
          args.sendCounts = copyArray(sendCounts, p);
          args.sendDispls = copyArray(sendDispls, p);
          STRATA_REQUIRE(args.count == args.sendCounts[static_cast<size_t>(me)], strataInvalidArgument,
                         "recvcount %zu differs from sendcounts[%d] = %zu at the root", args.count, me,
                         args.sendCounts[static_cast<size_t>(me)]);
          STRATA_CHECK(blockExtent("sendcounts/displs", args.sendCounts, args.sendDispls, false, es, &extent));
        }
        break;
      case Collective::kAllToAllv: {
        STRATA_REQUIRE(counts && displs, strataInvalidArgument, "recvcounts and rdispls must not be NULL");
        args.counts = copyArray(counts, p);
        args.displs = copyArray(displs, p);
        STRATA_CHECK(blockExtent("recvcounts/rdispls", args.counts, args.displs, true, es, &extent));
        if (send != nullptr && send == recv) {  // in place: one layout for both sides
          args.sendCounts = args.counts;
          args.sendDispls = args.displs;
        } else {
          STRATA_REQUIRE(sendCounts && sendDispls, strataInvalidArgument, "sendcounts and sdispls must not be NULL");
          args.sendCounts = copyArray(sendCounts, p);
          args.sendDispls = copyArray(sendDispls, p);
        }
        STRATA_CHECK(blockExtent("sendcounts/sdispls", args.sendCounts, args.sendDispls, false, es, &extent));
        break;
      }
      case Collective::kReduceScatterv: {
        STRATA_REQUIRE(strata::isValidRedOp(args.op), strataInvalidArgument, "invalid reduction op %d", static_cast<int>(args.op));
        STRATA_REQUIRE(counts, strataInvalidArgument, "recvcounts must not be NULL");
        args.counts = copyArray(counts, p);
        STRATA_CHECK(blockExtent("recvcounts", args.counts, packedDispls(args.counts), false, es, &extent));
        args.count = args.counts[static_cast<size_t>(me)];
        break;
      }
      default: return strata::makeStatus(strataInternalError, "not an irregular collective");
    }
    STRATA_CHECK(strata::api::validate(c, &args, send, recv, strata::sendUse(args, me), strata::recvUse(args, me)));
    // A call with nothing to move anywhere is a no-op; only the collectives whose counts every rank
    // knows can tell.
    if (args.coll == Collective::kAllGatherv || args.coll == Collective::kReduceScatterv) {
      bool empty = true;
      for (size_t x : args.counts) empty &= x == 0;
      if (empty) return Status::Ok();
    }
    return strata::runCollective(c, args, send, recv, stream);
  });
}

}  // namespace

extern "C" {

strataResult_t strataAllGatherv(const void* sendbuff, size_t sendcount, void* recvbuff, const size_t* recvcounts,
                                const size_t* displs, strataDataType_t datatype, strataComm_t comm,
                                cudaStream_t stream) {
  return runIrregular("strataAllGatherv", comm, strata::api::makeArgs(Collective::kAllGatherv, sendcount, datatype, strataSum, 0),
                      sendbuff, recvbuff, stream, recvcounts, displs, nullptr, nullptr);
}

strataResult_t strataGatherv(const void* sendbuff, size_t sendcount, void* recvbuff, const size_t* recvcounts,
                             const size_t* displs, strataDataType_t datatype, int root, strataComm_t comm,
                             cudaStream_t stream) {
  return runIrregular("strataGatherv", comm, strata::api::makeArgs(Collective::kGatherv, sendcount, datatype, strataSum, root),
                      sendbuff, recvbuff, stream, recvcounts, displs, nullptr, nullptr);
}

strataResult_t strataScatterv(const void* sendbuff, const size_t* sendcounts, const size_t* displs, void* recvbuff,
                              size_t recvcount, strataDataType_t datatype, int root, strataComm_t comm,
                              cudaStream_t stream) {
  return runIrregular("strataScatterv", comm, strata::api::makeArgs(Collective::kScatterv, recvcount, datatype, strataSum, root),
                      sendbuff, recvbuff, stream, nullptr, nullptr, sendcounts, displs);
}

strataResult_t strataAlltoAllv(const void* sendbuff, const size_t* sendcounts, const size_t* sdispls, void* recvbuff,
                               const size_t* recvcounts, const size_t* rdispls, strataDataType_t datatype,
                               strataComm_t comm, cudaStream_t stream) {
  return runIrregular("strataAlltoAllv", comm, strata::api::makeArgs(Collective::kAllToAllv, 0, datatype, strataSum, 0), sendbuff,
                      recvbuff, stream, recvcounts, rdispls, sendcounts, sdispls);
}

strataResult_t strataReduceScatterv(const void* sendbuff, void* recvbuff, const size_t* recvcounts,
                                    strataDataType_t datatype, strataRedOp_t op, strataComm_t comm,
                                    cudaStream_t stream) {
  return runIrregular("strataReduceScatterv", comm, strata::api::makeArgs(Collective::kReduceScatterv, 0, datatype, op, 0), sendbuff,
                      recvbuff, stream, recvcounts, nullptr, nullptr, nullptr);
}

}  // extern "C"
