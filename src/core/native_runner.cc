#include "src/core/native_runner.h"

#include <climits>
#include <cstring>
#include <vector>

#include "inter_node/mpi_check.h"

namespace strata {

namespace {

bool mpiType(DataType t, MPI_Datatype* out) {
  switch (t) {
    case strataInt8: *out = MPI_INT8_T; return true;
    case strataUint8: *out = MPI_UINT8_T; return true;
    case strataInt32: *out = MPI_INT32_T; return true;
    case strataUint32: *out = MPI_UINT32_T; return true;
    case strataInt64: *out = MPI_INT64_T; return true;
    case strataUint64: *out = MPI_UINT64_T; return true;
    case strataFloat32: *out = MPI_FLOAT; return true;
    case strataFloat64: *out = MPI_DOUBLE; return true;
    default: return false;  // 16-bit floats: MPI has no standard type
  }
}

bool mpiOp(RedOp op, MPI_Op* out) {
  switch (op) {
    case strataSum: *out = MPI_SUM; return true;
    case strataProd: *out = MPI_PROD; return true;
    case strataMax: *out = MPI_MAX; return true;
    case strataMin: *out = MPI_MIN; return true;
    default: return false;  // average: MPI has no such op
  }
}

bool fitsInt(size_t v) { return v <= static_cast<size_t>(INT_MAX); }

bool allFitInt(const std::vector<size_t>& v) {
  for (size_t x : v) {
    if (!fitsInt(x)) return false;
  }
  return true;
}

std::vector<int> ints(const std::vector<size_t>& v, size_t unit = 1) {
  std::vector<int> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = static_cast<int>(v[i] / unit);
  return out;
}

// The v-variants whose counts and displacements are this rank's own (or the root's alone).
bool rankLocalArrays(Collective c) {
  return c == Collective::kGatherv || c == Collective::kScatterv || c == Collective::kAllToAllv;
}

// MPI takes int counts and displacements. The smallest unit (a power of two of elements) in which
// every value is a whole number that fits an int; 0 if there is none. A run of `unit` elements keeps
// the type signature, so ranks may choose different units for the same call.
size_t unitFor(const CollectiveArgs& a) {
  for (size_t unit = 1; unit <= (size_t{1} << 20); unit *= 2) {
    bool fits = a.count % unit == 0 && fitsInt(a.count / unit);
    for (const auto* v : {&a.counts, &a.displs, &a.sendCounts, &a.sendDispls}) {
      for (size_t x : *v) fits = fits && x % unit == 0 && fitsInt(x / unit);
    }
    if (fits) return unit;
  }
  return 0;
}

}  // namespace

bool nativeSupports(const CollectiveArgs& a) {
  // Only what every rank shares decides it, so every rank picks the same candidates.
  if (a.device || a.coll == Collective::kShift) return false;
  MPI_Datatype t;
  MPI_Op o;
  if (!mpiType(a.type, &t)) return false;
  if ((isReduction(a.coll)) && !mpiOp(a.op, &o)) return false;
  if (rankLocalArrays(a.coll)) return true;  // runNative picks a unit that fits, per rank
  return fitsInt(a.count) && allFitInt(a.counts) && allFitInt(a.displs);
}

namespace {

// gatherv, scatterv and alltoallv: counts and displacements in a unit of `unit` elements (unitFor).
Status runNativeRankLocal(strataComm* comm, const CollectiveArgs& a, MPI_Datatype element, const void* send, void* recv) {
  const size_t unit = unitFor(a);
  STRATA_REQUIRE(unit != 0, strataInvalidArgument,
                 "native: %s counts and displacements have no common unit in which they fit MPI's int",
                 collectiveName(a.coll));
  MPI_Datatype t = element;
  if (unit > 1) {
    STRATA_CHECK_MPI(PMPI_Type_contiguous(static_cast<int>(unit), element, &t));
    STRATA_CHECK_MPI(PMPI_Type_commit(&t));
  }
  const MPI_Comm c = comm->comm;
  const bool root = comm->rank == a.root;
  const int n = static_cast<int>(a.count / unit);
  int rc = MPI_SUCCESS;
  switch (a.coll) {
    case Collective::kGatherv: {
      const std::vector<int> counts = ints(a.counts, unit), displs = ints(a.displs, unit);
      rc = PMPI_Gatherv(root && a.inPlace ? MPI_IN_PLACE : send, n, t, recv, root ? counts.data() : nullptr,
                        root ? displs.data() : nullptr, t, a.root, c);
      break;
    }
    case Collective::kScatterv: {
      const std::vector<int> counts = ints(a.sendCounts, unit), displs = ints(a.sendDispls, unit);
      rc = PMPI_Scatterv(send, root ? counts.data() : nullptr, root ? displs.data() : nullptr, t,
                         root && a.inPlace ? MPI_IN_PLACE : recv, n, t, a.root, c);
      break;
    }
    default: {  // alltoallv
      const std::vector<int> rcounts = ints(a.counts, unit), rdispls = ints(a.displs, unit);
      if (a.inPlace) {
        rc = PMPI_Alltoallv(MPI_IN_PLACE, nullptr, nullptr, t, recv, rcounts.data(), rdispls.data(), t, c);
      } else {
        const std::vector<int> scounts = ints(a.sendCounts, unit), sdispls = ints(a.sendDispls, unit);
        rc = PMPI_Alltoallv(send, scounts.data(), sdispls.data(), t, recv, rcounts.data(), rdispls.data(), t, c);
      }
      break;
    }
  }
  if (unit > 1) PMPI_Type_free(&t);
  if (rc != MPI_SUCCESS) return mpiError(collectiveName(a.coll), rc, STRATA_WHERE);
  return Status::Ok();
}

}  // namespace

Status runNative(strataComm* comm, const CollectiveArgs& a, const void* send, void* recv) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  STRATA_REQUIRE(mpiType(a.type, &t), strataInternalError, "native: no MPI type for %s", dataTypeName(a.type));
  if (isReduction(a.coll)) {
    STRATA_REQUIRE(mpiOp(a.op, &op), strataInternalError, "native: no MPI op for %s", redOpName(a.op));
  }
  const MPI_Comm c = comm->comm;
  const int n = static_cast<int>(a.count);
  const size_t es = a.elemSize();
  const bool root = comm->rank == a.root;
  // Strata's in-place calls (sendbuff == recvbuff, or a rank's own block of the larger buffer)
  // become MPI_IN_PLACE where MPI has it.
  switch (a.coll) {
    case Collective::kAllReduce:
      STRATA_CHECK_MPI(PMPI_Allreduce(a.inPlace ? MPI_IN_PLACE : send, recv, n, t, op, c));
      break;
    case Collective::kBroadcast:
      if (root && send != recv) std::memcpy(recv, send, a.count * es);
      STRATA_CHECK_MPI(PMPI_Bcast(recv, n, t, a.root, c));
      break;
    case Collective::kReduce:
      STRATA_CHECK_MPI(PMPI_Reduce(root && a.inPlace ? MPI_IN_PLACE : send, recv, n, t, op, a.root, c));
      break;
    case Collective::kAllGather:
      STRATA_CHECK_MPI(PMPI_Allgather(a.inPlace ? MPI_IN_PLACE : send, n, t, recv, n, t, c));
      break;
    case Collective::kReduceScatter:
      if (a.inPlace) {
        // MPI's in-place result is the buffer's first block; Strata's is the rank's own block.
        STRATA_CHECK_MPI(PMPI_Reduce_scatter_block(MPI_IN_PLACE, const_cast<void*>(send), n, t, op, c));
        std::memmove(recv, send, a.count * es);
      } else {
        STRATA_CHECK_MPI(PMPI_Reduce_scatter_block(send, recv, n, t, op, c));
      }
      break;
    case Collective::kGather:
      STRATA_CHECK_MPI(PMPI_Gather(root && a.inPlace ? MPI_IN_PLACE : send, n, t, recv, n, t, a.root, c));
      break;
    case Collective::kScatter:
      STRATA_CHECK_MPI(PMPI_Scatter(send, n, t, root && a.inPlace ? MPI_IN_PLACE : recv, n, t, a.root, c));
      break;
    case Collective::kAllToAll:
      STRATA_CHECK_MPI(PMPI_Alltoall(a.inPlace ? MPI_IN_PLACE : send, n, t, recv, n, t, c));
      break;
    case Collective::kScan:
      STRATA_CHECK_MPI(PMPI_Scan(a.inPlace ? MPI_IN_PLACE : send, recv, n, t, op, c));
      break;
    case Collective::kExscan: {
      // Rank 0's receive buffer is not significant to Strata (it may be null, or shorter than
      // count) and stays untouched, while MPI may write anything there (MPI-3.1 5.11.2: undefined).
      // So rank 0 hands MPI scratch; in place (recv == send, which a.inPlace does not mark on rank
      // 0) its input is the buffer, handed as MPI_IN_PLACE (aliased buffers are erroneous) and put
      // back afterwards.
      const bool inPlace = a.inPlace || (recv != nullptr && recv == send);
      if (comm->rank != 0) {
        STRATA_CHECK_MPI(PMPI_Exscan(inPlace ? MPI_IN_PLACE : send, recv, n, t, op, c));
      } else {
        void* scratch = nullptr;
        STRATA_CHECK(comm->hostScratch.reserve(a.count * es, &scratch));
        if (inPlace) {
          std::memcpy(scratch, recv, a.count * es);  // its input, put back after
          STRATA_CHECK_MPI(PMPI_Exscan(MPI_IN_PLACE, recv, n, t, op, c));
          std::memcpy(recv, scratch, a.count * es);
        } else {
          STRATA_CHECK_MPI(PMPI_Exscan(send, scratch, n, t, op, c));
        }
      }
      break;
    }
    case Collective::kBarrier: STRATA_CHECK_MPI(PMPI_Barrier(c)); break;
    case Collective::kAllGatherv: {
      const std::vector<int> counts = ints(a.counts), displs = ints(a.displs);
      STRATA_CHECK_MPI(PMPI_Allgatherv(a.inPlace ? MPI_IN_PLACE : send, n, t, recv, counts.data(), displs.data(), t, c));
      break;
    }
    case Collective::kGatherv:
    case Collective::kScatterv:
    case Collective::kAllToAllv: return runNativeRankLocal(comm, a, t, send, recv);
    case Collective::kReduceScatterv: {
      const std::vector<int> counts = ints(a.counts);
      if (a.inPlace) {
        STRATA_CHECK_MPI(PMPI_Reduce_scatter(MPI_IN_PLACE, const_cast<void*>(send), counts.data(), t, op, c));
        std::memmove(recv, send, a.counts[static_cast<size_t>(comm->rank)] * es);
      } else {
        STRATA_CHECK_MPI(PMPI_Reduce_scatter(send, recv, counts.data(), t, op, c));
      }
      break;
    }
    case Collective::kShift: return makeStatus(strataInternalError, "native: MPI has no circular shift collective");
  }
  return Status::Ok();
}

}  // namespace strata
