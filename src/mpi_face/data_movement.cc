// The MPI face's collectives that move data (MPI_Bcast, MPI_Allgather(v), MPI_Alltoall(v),
// MPI_Gather(v), MPI_Scatter(v)) and MPI_Barrier, through MPI's profiling interface: each runs on
// Strata when it can and calls its PMPI_ version otherwise (face.h counts which and why). MPI's
// argument rules are translated here: int counts, v-variants' counts and displacements in units
// of the datatype's extent (negative displacements included), MPI_IN_PLACE where MPI allows it,
// and send and receive datatypes that differ but have the same type signature, also between ranks.
// Strata moves bytes: contiguous datatypes straight from the user's buffers, any other datatype
// packed (packed_blocks.h), so no rank passes a call on for its datatype alone (serve.h).
#include <mpi.h>
#include <strata/strata.h>

#include "src/mpi_face/packed_blocks.h"
#include "src/mpi_face/serve.h"

using namespace strata::mpi_face;

extern "C" {

// ---- Data movement ------------------------------------------------------------------------------

int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  const Call c = Call::kBcast;
  return entryPoint(c, comm, [&] {
    strataComm_t sc = movement(c, comm);
    if (sc == nullptr || !rootInRange(c, comm, sc, root)) return PMPI_Bcast(buf, count, type, root, comm);
    PackedBlocks b;
    if (count < 0 || buf == MPI_IN_PLACE || !b.describe(buf, 1, count, type)) {
      return unservable(c, comm, sc, {&b},
                        [&] { return PMPI_Bcast(buf, count, type, root, comm); });
    }
    Guard guard;
    const bool isRoot = rankOf(comm) == root;
    if (isRoot && !b.packIn()) return refusePacking(c, comm, b);
    const int rc = finishServed(c, comm, sc, strataBroadcast(b.data(), b.data(), b.bytes(0), strataUint8, root, sc, nullptr),
                                b.data());
    return unpacked(c, comm, rc, isRoot ? nullptr : &b);
  });
}

int MPI_Allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                  MPI_Comm comm) {
  const Call c = Call::kAllgather;
  return entryPoint(c, comm, [&] {
    strataComm_t sc = movement(c, comm);
    if (sc == nullptr) return PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    const int p = sizeOf(comm), me = rankOf(comm);
    const bool inPlace = sbuf == MPI_IN_PLACE;
    PackedBlocks recv, send;
    const bool ok = rcount >= 0 && rbuf != MPI_IN_PLACE && recv.describe(rbuf, static_cast<size_t>(p), rcount, rtype) &&
                    (inPlace || (scount >= 0 && send.describe(sbuf, 1, scount, stype) && send.bytes(0) == recv.bytes(0)));
    if (!ok) {
      return unservable(c, comm, sc, {&recv, &send},
                        [&] { return PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm); });
    }
    Guard guard;
    if (!(inPlace ? recv.packIn(me, me + 1) : send.packIn())) return refusePacking(c, comm, inPlace ? recv : send);
    const void* s = inPlace ? recv.block(me) : send.data();
    const int rc = finishServed(c, comm, sc, strataAllGather(s, recv.data(), recv.bytes(0), strataUint8, sc, nullptr),
                                recv.data());
    return unpacked(c, comm, rc, &recv);
  });
}

int MPI_Allgatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[], const int displs[],
                   MPI_Datatype rtype, MPI_Comm comm) {
  const Call c = Call::kAllgatherv;
  return entryPoint(c, comm, [&] {
    strataComm_t sc = movement(c, comm);
    if (sc == nullptr) return PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
    const int p = sizeOf(comm), me = rankOf(comm);
    const bool inPlace = sbuf == MPI_IN_PLACE;
    PackedBlocks recv, send;
    const bool ok = rbuf != MPI_IN_PLACE && recv.describe(rbuf, rcounts, displs, p, rtype) &&
                    (inPlace || (scount >= 0 && send.describe(sbuf, 1, scount, stype) &&
                                 send.bytes(0) == recv.bytes(static_cast<size_t>(me))));
    if (!ok) {
      return unservable(c, comm, sc, {&recv, &send},
                        [&] { return PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm); });
    }
    Guard guard;
    const size_t m = static_cast<size_t>(me);
    if (!(inPlace ? recv.packIn(m, m + 1) : send.packIn())) return refusePacking(c, comm, inPlace ? recv : send);
    const void* s = inPlace ? recv.block(m) : send.data();
    const int rc = finishServed(
        c, comm, sc,
        strataAllGatherv(s, recv.bytes(m), recv.data(), recv.bytes().data(), recv.offsets().data(), strataUint8, sc, nullptr),
        recv.data());
    return unpacked(c, comm, rc, &recv);
  });
}

int MPI_Alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                 MPI_Comm comm) {
  const Call c = Call::kAlltoall;
  return entryPoint(c, comm, [&] {
    strataComm_t sc = movement(c, comm);
    if (sc == nullptr) return PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    const int p = sizeOf(comm);
    const bool inPlace = sbuf == MPI_IN_PLACE;
    PackedBlocks recv, send;
    const bool ok = rcount >= 0 && rbuf != MPI_IN_PLACE && recv.describe(rbuf, static_cast<size_t>(p), rcount, rtype) &&
                    (inPlace || (scount >= 0 && send.describe(sbuf, static_cast<size_t>(p), scount, stype) &&
                                 send.bytes(0) == recv.bytes(0)));
    if (!ok) {
      return unservable(c, comm, sc, {&recv, &send},
                        [&] { return PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm); });
    }
    Guard guard;
    PackedBlocks& in = inPlace ? recv : send;
    if (!in.packIn()) return refusePacking(c, comm, in);
    const int rc = finishServed(c, comm, sc, strataAlltoAll(in.data(), recv.data(), recv.bytes(0), strataUint8, sc, nullptr),
                                recv.data());
    return unpacked(c, comm, rc, &recv);
  });
}

int MPI_Alltoallv(const void* sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void* rbuf,
                  const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm) {
  const Call c = Call::kAlltoallv;
  return entryPoint(c, comm, [&] {
    strataComm_t sc = movement(c, comm);
    if (sc == nullptr) return PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
    const int p = sizeOf(comm);
    const bool inPlace = sbuf == MPI_IN_PLACE;
    PackedBlocks recv, send;
    const bool ok = rbuf != MPI_IN_PLACE && recv.describe(rbuf, rcounts, rdispls, p, rtype) &&
                    (inPlace || send.describe(sbuf, scounts, sdispls, p, stype));
    if (!ok) {
      return unservable(c, comm, sc, {&recv, &send},
                        [&] { return PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm); });
    }
    Guard guard;
    PackedBlocks& in = inPlace ? recv : send;
    if (!in.packIn()) return refusePacking(c, comm, in);
    const int rc = finishServed(c, comm, sc,
                                strataAlltoAllv(in.data(), in.bytes().data(), in.offsets().data(), recv.data(),
                                                recv.bytes().data(), recv.offsets().data(), strataUint8, sc, nullptr),
                                recv.data());
    return unpacked(c, comm, rc, &recv);
  });
}

int MPI_Gather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, int root,
               MPI_Comm comm) {
  const Call c = Call::kGather;
  return entryPoint(c, comm, [&] {
    strataComm_t sc = movement(c, comm);
    if (sc == nullptr || !rootInRange(c, comm, sc, root)) return PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
    const int p = sizeOf(comm);
    const bool isRoot = rankOf(comm) == root;
    const bool inPlace = isRoot && sbuf == MPI_IN_PLACE;
    PackedBlocks recv, send;
    // MPI_IN_PLACE is the root's send buffer only (MPI-3.1 5.5); elsewhere MPI reports it.
    bool ok = !isRoot || (rcount >= 0 && rbuf != MPI_IN_PLACE && recv.describe(rbuf, static_cast<size_t>(p), rcount, rtype));
    ok = ok && (inPlace || (scount >= 0 && sbuf != MPI_IN_PLACE && send.describe(sbuf, 1, scount, stype) &&
                            (!isRoot || send.bytes(0) == recv.bytes(0))));
    if (!ok) {
      return unservable(c, comm, sc, {&recv, &send},
                        [&] { return PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm); });
    }
    Guard guard;
    const size_t r = static_cast<size_t>(root);
    if (!(inPlace ? recv.packIn(r, r + 1) : send.packIn())) return refusePacking(c, comm, inPlace ? recv : send);
    const void* s = inPlace ? recv.block(r) : send.data();
    const size_t block = isRoot ? recv.bytes(0) : send.bytes(0);
    const int rc = finishServed(c, comm, sc,
                                strataGather(s, isRoot ? recv.data() : nullptr, block, strataUint8, root, sc, nullptr),
                                isRoot ? recv.data() : send.data());
    return unpacked(c, comm, rc, isRoot ? &recv : nullptr);
  });
}

int MPI_Gatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[], const int displs[],
                MPI_Datatype rtype, int root, MPI_Comm comm) {
  const Call c = Call::kGatherv;
  return entryPoint(c, comm, [&] {
    strataComm_t sc = movement(c, comm);
    if (sc == nullptr || !rootInRange(c, comm, sc, root)) {
      return PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
    }
    const int p = sizeOf(comm);
    const bool isRoot = rankOf(comm) == root;
    const bool inPlace = isRoot && sbuf == MPI_IN_PLACE;
    const size_t r = static_cast<size_t>(root);
    PackedBlocks recv, send;
    bool ok = !isRoot || (rbuf != MPI_IN_PLACE && recv.describe(rbuf, rcounts, displs, p, rtype));
    ok = ok && (inPlace || (scount >= 0 && sbuf != MPI_IN_PLACE && send.describe(sbuf, 1, scount, stype) &&
                            (!isRoot || send.bytes(0) == recv.bytes(r))));
    if (!ok) {
      return unservable(c, comm, sc, {&recv, &send},
                        [&] { return PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm); });
    }
    Guard guard;
    if (!(inPlace ? recv.packIn(r, r + 1) : send.packIn())) return refusePacking(c, comm, inPlace ? recv : send);
    const void* s = inPlace ? recv.block(r) : send.data();
    const size_t sendBytes = inPlace ? recv.bytes(r) : send.bytes(0);
    const int rc = finishServed(c, comm, sc,
                                strataGatherv(s, sendBytes, isRoot ? recv.data() : nullptr,
                                              isRoot ? recv.bytes().data() : nullptr,
                                              isRoot ? recv.offsets().data() : nullptr, strataUint8, root, sc, nullptr),
                                isRoot ? recv.data() : send.data());
    return unpacked(c, comm, rc, isRoot ? &recv : nullptr);
  });
}

int MPI_Scatter(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, int root,
                MPI_Comm comm) {
  const Call c = Call::kScatter;
  return entryPoint(c, comm, [&] {
    strataComm_t sc = movement(c, comm);
    if (sc == nullptr || !rootInRange(c, comm, sc, root)) return PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
    const int p = sizeOf(comm);
    const bool isRoot = rankOf(comm) == root;
    const bool inPlace = isRoot && rbuf == MPI_IN_PLACE;
    PackedBlocks send, recv;
    // MPI_IN_PLACE is the root's receive buffer only (MPI-3.1 5.6); elsewhere MPI reports it.
    bool ok = !isRoot || (scount >= 0 && sbuf != MPI_IN_PLACE && send.describe(sbuf, static_cast<size_t>(p), scount, stype));
    ok = ok && (inPlace || (rcount >= 0 && rbuf != MPI_IN_PLACE && recv.describe(rbuf, 1, rcount, rtype) &&
                            (!isRoot || recv.bytes(0) == send.bytes(0))));
    if (!ok) {
      return unservable(c, comm, sc, {&send, &recv},
                        [&] { return PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm); });
    }
    Guard guard;
    const size_t r = static_cast<size_t>(root);
    if (isRoot && !send.packIn()) return refusePacking(c, comm, send);
    void* d = inPlace ? send.block(r) : recv.data();
    const size_t block = isRoot ? send.bytes(0) : recv.bytes(0);
    const int rc = finishServed(c, comm, sc, strataScatter(isRoot ? send.data() : nullptr, d, block, strataUint8, root, sc, nullptr),
                                d);
    return unpacked(c, comm, rc, inPlace ? nullptr : &recv);
  });
}

int MPI_Scatterv(const void* sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void* rbuf, int rcount,
                 MPI_Datatype rtype, int root, MPI_Comm comm) {
  const Call c = Call::kScatterv;
  return entryPoint(c, comm, [&] {
    strataComm_t sc = movement(c, comm);
    if (sc == nullptr || !rootInRange(c, comm, sc, root)) {
      return PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
    }
    const int p = sizeOf(comm);
    const bool isRoot = rankOf(comm) == root;
    const bool inPlace = isRoot && rbuf == MPI_IN_PLACE;
    const size_t r = static_cast<size_t>(root);
    PackedBlocks send, recv;
    bool ok = !isRoot || (sbuf != MPI_IN_PLACE && send.describe(sbuf, scounts, displs, p, stype));
    ok = ok && (inPlace || (rcount >= 0 && rbuf != MPI_IN_PLACE && recv.describe(rbuf, 1, rcount, rtype) &&
                            (!isRoot || recv.bytes(0) == send.bytes(r))));
    if (!ok) {
      return unservable(c, comm, sc, {&send, &recv},
                        [&] { return PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm); });
    }
    Guard guard;
    if (isRoot && !send.packIn()) return refusePacking(c, comm, send);
    void* d = inPlace ? send.block(r) : recv.data();
    const size_t recvBytes = inPlace ? send.bytes(r) : recv.bytes(0);
    const int rc = finishServed(c, comm, sc,
                                strataScatterv(isRoot ? send.data() : nullptr, isRoot ? send.bytes().data() : nullptr,
                                               isRoot ? send.offsets().data() : nullptr, d, recvBytes, strataUint8, root,
                                               sc, nullptr),
                                d);
    return unpacked(c, comm, rc, inPlace ? nullptr : &recv);
  });
}

int MPI_Barrier(MPI_Comm comm) {
  return entryPoint(Call::kBarrier, comm, [&] {
    strataComm_t sc = servable(Call::kBarrier, comm);
    if (sc == nullptr) return PMPI_Barrier(comm);
    Guard guard;
    return finishServed(Call::kBarrier, comm, sc, strataBarrier(sc, nullptr), nullptr);
  });
}

}  // extern "C"
