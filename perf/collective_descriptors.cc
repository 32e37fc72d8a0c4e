#include "perf/collective_descriptors.h"

#include <algorithm>
#include <cstring>

#include "tests/reference/reference.h"

namespace strata::perf {
namespace {

MPI_Datatype mpiType(strataDataType_t t) {
  switch (t) {
    case strataInt8: return MPI_INT8_T;
    case strataUint8: return MPI_UINT8_T;
    case strataInt32: return MPI_INT32_T;
    case strataUint32: return MPI_UINT32_T;
    case strataInt64: return MPI_INT64_T;
    case strataUint64: return MPI_UINT64_T;
    case strataFloat32: return MPI_FLOAT;
    case strataFloat64: return MPI_DOUBLE;
    default: return MPI_DATATYPE_NULL;
  }
}
MPI_Op mpiOp(strataRedOp_t op) {
  switch (op) {
    case strataSum: return MPI_SUM;
    case strataProd: return MPI_PROD;
    case strataMax: return MPI_MAX;
    case strataMin: return MPI_MIN;
    default: return MPI_OP_NULL;
  }
}

}  // namespace

CallShape CollectiveDescriptor::shape(size_t bytes, size_t es, int n) const {
  // nccl-tests' size is the larger buffer: one block, or the blocks of every rank.
  const CollectiveSpec& spec = specOf(coll);
  const bool blocked = spec.sendLength == Length::kBlocks || spec.recvLength == Length::kBlocks;
  CallShape s;
  if (spec.sendLength == Length::kNone && spec.recvLength == Length::kNone) return s;  // barrier
  s.count = bytes / es / (blocked ? static_cast<size_t>(n) : 1);
  auto length = [&](Length l) { return l == Length::kBlocks ? s.count * static_cast<size_t>(n) : l == Length::kBlock ? s.count : 0; };
  s.sendElems = length(spec.sendLength);
  s.recvElems = length(spec.recvLength);
  s.reportedCount = std::max(s.sendElems, s.recvElems);
  s.reportedBytes = s.reportedCount * es;
  return s;
}

const std::vector<CollectiveDescriptor>& collectiveDescriptors() {
  // The regular collectives of the table (strata-perf's --op names), in its order.
  static const std::vector<CollectiveDescriptor> all = [] {
    std::vector<CollectiveDescriptor> v;
    for (int k = 0; k < kNumCollectives; ++k) {
      const CollectiveSpec& spec = specOf(static_cast<Collective>(k));
      if (!spec.irregular) v.push_back({spec.coll, spec.name, spec.reduces, spec.rooted});
    }
    return v;
  }();
  return all;
}

const CollectiveDescriptor* findDescriptor(const std::string& name) {
  Collective c;
  if (!parseCollective(name.c_str(), &c)) return nullptr;
  for (const CollectiveDescriptor& d : collectiveDescriptors()) {
    if (d.coll == c) return &d;
  }
  return nullptr;
}

void callPointers(const CollectiveDescriptor& d, const CallShape& s, const CallArgs& a, int rank, size_t es, Buffers& b,
                  const void** send, void** recv) {
  *send = b.send;
  *recv = b.recv;
  if (!a.inPlace) return;
  // The table's in-place rule; the root's block is in place at the root alone.
  const InPlace rule = specOf(d.coll).inPlace;
  if ((rule == InPlace::kSendIsRootBlock || rule == InPlace::kRecvIsRootBlock) && rank != a.root) return;
  CollectiveArgs args;
  args.coll = d.coll;
  args.count = s.count;
  args.root = a.root;
  const InPlaceAlias alias = inPlaceAlias(args, rank);
  if (alias.sendInsideRecv) {
    *send = static_cast<char*>(b.recv) + alias.offset * es;
  } else {
    *recv = static_cast<char*>(b.send) + alias.offset * es;
  }
}

void prepareCheck(const CollectiveDescriptor& d, const CallShape& s, const CallArgs& a, int rank, int n, unsigned seed,
                  Buffers& b) {
  using namespace strata::test;
  const size_t es = typeSize(a.type);
  b.expected.assign(s.recvElems * es, 0);
  const void* send = nullptr;
  void* recv = nullptr;
  callPointers(d, s, a, rank, es, b, &send, &recv);
  void* input = const_cast<void*>(send);
  switch (d.coll) {
    case Collective::kAllReduce:
    case Collective::kReduce:
      fillInput(a.type, a.op, rank, input, 0, s.count, seed);
      fillReduced(a.type, a.op, n, b.expected.data(), 0, s.count, seed);
      break;
    case Collective::kBroadcast:
      if (rank == a.root) fillInput(a.type, a.op, rank, input, 0, s.count, seed);
      fillInput(a.type, a.op, a.root, b.expected.data(), 0, s.count, seed);
      break;
    case Collective::kAllGather:
      fillInput(a.type, a.op, rank, input, 0, s.count, seed);
      for (int r = 0; r < n; ++r) fillInput(a.type, a.op, r, b.expected.data() + static_cast<size_t>(r) * s.count * es, 0, s.count, seed);
      break;
    case Collective::kReduceScatter:
      fillInput(a.type, a.op, rank, input, 0, s.sendElems, seed);
      fillReduced(a.type, a.op, n, b.expected.data(), static_cast<size_t>(rank) * s.count, s.count, seed);
      break;
    case Collective::kGather:
      fillInput(a.type, a.op, rank, input, 0, s.count, seed);
      for (int r = 0; r < n; ++r) fillInput(a.type, a.op, r, b.expected.data() + static_cast<size_t>(r) * s.count * es, 0, s.count, seed);
      break;
    case Collective::kScatter:
      if (rank == a.root) fillInput(a.type, a.op, rank, b.send, 0, s.sendElems, seed);
      fillInput(a.type, a.op, a.root, b.expected.data(), static_cast<size_t>(rank) * s.count, s.count, seed);
      break;
    case Collective::kAllToAll:
      fillInput(a.type, a.op, rank, input, 0, s.sendElems, seed);
      for (int r = 0; r < n; ++r) {
        fillInput(a.type, a.op, r, b.expected.data() + static_cast<size_t>(r) * s.count * es, static_cast<size_t>(rank) * s.count, s.count, seed);
      }
      break;
    case Collective::kScan:
    case Collective::kExscan: {
      fillInput(a.type, a.op, rank, input, 0, s.count, seed);
      const int last = d.coll == Collective::kScan ? rank : rank - 1;
      if (last >= 0) {
        for (size_t i = 0; i < s.count; ++i) writeValue(a.type, b.expected.data(), i, reduceRange(a.type, a.op, 0, last, i, seed));
      }
      break;
    }
    case Collective::kShift: {
      fillInput(a.type, a.op, rank, input, 0, s.count, seed);
      const int from = ((rank - a.shift) % n + n) % n;
      fillInput(a.type, a.op, from, b.expected.data(), 0, s.count, seed);
      break;
    }
    default: break;
  }
}

size_t countWrong(const CollectiveDescriptor& d, const CallShape& s, const CallArgs& a, int rank, int n, Buffers& b,
                  bool mpiInPlaceLayout) {
  const size_t es = test::typeSize(a.type);
  if (d.coll == Collective::kBarrier) return 0;
  if ((d.coll == Collective::kReduce || d.coll == Collective::kGather) && rank != a.root) return 0;
  if (d.coll == Collective::kExscan && rank == 0) return 0;  // untouched by definition
  const void* send = nullptr;
  void* recv = nullptr;
  callPointers(d, s, a, rank, es, b, &send, &recv);
  if (mpiInPlaceLayout && a.inPlace && mpiMovesInPlaceResult(d)) recv = b.send;
  size_t wrong = 0;
  for (size_t i = 0; i < s.recvElems; ++i) {
    if (std::memcmp(static_cast<char*>(recv) + i * es, b.expected.data() + i * es, es) != 0) ++wrong;
  }
  (void)n;
  return wrong;
}

strataResult_t runStrata(const CollectiveDescriptor& d, const CallShape& s, const CallArgs& a, const void* send,
                         void* recv, strataComm_t comm, cudaStream_t stream) {
  switch (d.coll) {
    case Collective::kAllReduce: return strataAllReduce(send, recv, s.count, a.type, a.op, comm, stream);
    case Collective::kBroadcast: return strataBroadcast(send, recv, s.count, a.type, a.root, comm, stream);
    case Collective::kReduce: return strataReduce(send, recv, s.count, a.type, a.op, a.root, comm, stream);
    case Collective::kAllGather: return strataAllGather(send, recv, s.count, a.type, comm, stream);
    case Collective::kReduceScatter: return strataReduceScatter(send, recv, s.count, a.type, a.op, comm, stream);
    case Collective::kGather: return strataGather(send, recv, s.count, a.type, a.root, comm, stream);
    case Collective::kScatter: return strataScatter(send, recv, s.count, a.type, a.root, comm, stream);
    case Collective::kAllToAll: return strataAlltoAll(send, recv, s.count, a.type, comm, stream);
    case Collective::kScan: return strataScan(send, recv, s.count, a.type, a.op, comm, stream);
    case Collective::kExscan: return strataExscan(send, recv, s.count, a.type, a.op, comm, stream);
    case Collective::kShift: return strataShift(send, recv, s.count, a.type, a.shift, comm, stream);
    case Collective::kBarrier: return strataBarrier(comm, stream);
    default: return strataInvalidUsage;
  }
}

bool mpiSupports(const CollectiveDescriptor& d, const CallArgs& a, std::string* why) {
  if (d.coll == Collective::kBarrier) return true;
  if (mpiType(a.type) == MPI_DATATYPE_NULL) {
    *why = std::string("MPI has no ") + test::typeName(a.type) + " datatype";
    return false;
  }
  if ((d.coll == Collective::kScan || d.coll == Collective::kExscan) && a.op == strataAvg) {
    *why = "a prefix average is not defined";
    return false;
  }
  if (d.hasOp && mpiOp(a.op) == MPI_OP_NULL) {
    *why = std::string("MPI has no ") + test::opName(a.op) + " operation";
    return false;
  }
  return true;
}

bool mpiMovesInPlaceResult(const CollectiveDescriptor& d) { return d.coll == Collective::kReduceScatter; }

namespace {

// The MPI entry points a baseline calls: the ordinary names (whatever defines them in the process,
// the MPI face included) or the profiling names (always the MPI library itself).
struct MpiEntryPoints {
  int (*allreduce)(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm);
  int (*bcast)(void*, int, MPI_Datatype, int, MPI_Comm);
  int (*reduce)(const void*, void*, int, MPI_Datatype, MPI_Op, int, MPI_Comm);
  int (*allgather)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm);
  int (*reduceScatterBlock)(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm);
  int (*gather)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, int, MPI_Comm);
  int (*scatter)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, int, MPI_Comm);
  int (*alltoall)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm);
  int (*scan)(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm);
  int (*exscan)(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm);
  int (*sendrecv)(const void*, int, MPI_Datatype, int, int, void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status*);
  int (*sendrecvReplace)(void*, int, MPI_Datatype, int, int, int, int, MPI_Comm, MPI_Status*);
  int (*barrier)(MPI_Comm);
};

const MpiEntryPoints kMpiNames = {MPI_Allreduce, MPI_Bcast,   MPI_Reduce,   MPI_Allgather, MPI_Reduce_scatter_block,
                                  MPI_Gather,    MPI_Scatter, MPI_Alltoall, MPI_Scan,      MPI_Exscan,
                                  MPI_Sendrecv,  MPI_Sendrecv_replace,      MPI_Barrier};
const MpiEntryPoints kProfilingNames = {PMPI_Allreduce, PMPI_Bcast,   PMPI_Reduce,   PMPI_Allgather, PMPI_Reduce_scatter_block,
                                        PMPI_Gather,    PMPI_Scatter, PMPI_Alltoall, PMPI_Scan,      PMPI_Exscan,
                                        PMPI_Sendrecv,  PMPI_Sendrecv_replace,       PMPI_Barrier};

}  // namespace

int runMpi(const CollectiveDescriptor& d, const CallShape& s, const CallArgs& a, const void* send, void* recv,
           MPI_Comm comm, int rank, size_t es, MpiNames names) {
  const MpiEntryPoints& f = names == MpiNames::kProfiling ? kProfilingNames : kMpiNames;
  const MPI_Datatype t = mpiType(a.type);
  const int count = static_cast<int>(s.count);
  const bool inPlace = a.inPlace;
  switch (d.coll) {
    case Collective::kAllReduce:
      return f.allreduce(inPlace ? MPI_IN_PLACE : send, recv, count, t, mpiOp(a.op), comm);
    case Collective::kBroadcast:
      // MPI_Bcast is in place by nature; out of place, the root first copies its input.
      if (!inPlace && rank == a.root && send != recv) std::memcpy(recv, send, s.count * es);
      return f.bcast(recv, count, t, a.root, comm);
    case Collective::kReduce:
      return f.reduce(inPlace && rank == a.root ? MPI_IN_PLACE : send, recv, count, t, mpiOp(a.op), a.root, comm);
    case Collective::kAllGather:
      return f.allgather(inPlace ? MPI_IN_PLACE : send, count, t, recv, count, t, comm);
    case Collective::kReduceScatter:
      // MPI_IN_PLACE: the input is the receive buffer, and the result lands at its start.
      return inPlace ? f.reduceScatterBlock(MPI_IN_PLACE, const_cast<void*>(send), count, t, mpiOp(a.op), comm)
                     : f.reduceScatterBlock(send, recv, count, t, mpiOp(a.op), comm);
    case Collective::kGather:
      return f.gather(inPlace && rank == a.root ? MPI_IN_PLACE : send, count, t, recv, count, t, a.root, comm);
    case Collective::kScatter:
      return f.scatter(send, count, t, inPlace && rank == a.root ? MPI_IN_PLACE : recv, count, t, a.root, comm);
    case Collective::kAllToAll: return f.alltoall(inPlace ? MPI_IN_PLACE : send, count, t, recv, count, t, comm);
    case Collective::kScan: return f.scan(inPlace ? MPI_IN_PLACE : send, recv, count, t, mpiOp(a.op), comm);
    case Collective::kExscan: return f.exscan(inPlace ? MPI_IN_PLACE : send, recv, count, t, mpiOp(a.op), comm);
    case Collective::kShift: {
      // MPI has no shift collective: the baseline is the one exchange it takes.
      int p = 0;
      MPI_Comm_size(comm, &p);
      const int to = ((rank + a.shift) % p + p) % p, from = ((rank - a.shift) % p + p) % p;
      return inPlace ? f.sendrecvReplace(recv, count, t, to, 0, from, 0, comm, MPI_STATUS_IGNORE)
                     : f.sendrecv(send, count, t, to, 0, recv, count, t, from, 0, comm, MPI_STATUS_IGNORE);
    }
    case Collective::kBarrier: return f.barrier(comm);
    default: return MPI_ERR_OTHER;
  }
}

}  // namespace strata::perf
