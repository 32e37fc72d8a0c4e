// How the MPI face decides, per call, whether Strata serves it or the MPI library does, and the
// helpers its reductions (reductions.cc) and data movement (data_movement.cc) share.
//
// The decision must come out alike on every rank, or some ranks would wait in one library for ranks
// that are in the other. So it reads only what MPI requires to be the same on every rank (the
// collective, the communicator, the root, a reduction's datatype, count and op), and the Strata
// communicator is created before any check of arguments that may differ between ranks. An argument
// that only some ranks get wrong (an erroneous program) goes to the MPI library on those ranks,
// which reports it, after they refused the call in Strata, so their peers' Strata call fails at
// once, naming the rank (refuseInvalid). A rank
// that lacks the resources to take its part (memory for its staging or scratch, a pack or copy that
// failed) aborts the Strata communicator instead, so its peers' call fails at once (refuseServed,
// src/mpi_face/face.h).
#pragma once

#include <mpi.h>
#include <strata/strata.h>

#include <initializer_list>

#include "src/mpi_face/face.h"
#include "src/mpi_face/packed_blocks.h"

namespace strata::mpi_face {

inline constexpr const char* kInvalidArguments = "invalid arguments on this rank (MPI reports them)";
inline constexpr const char* kBeyondPacking = "an element over 2 GiB the face cannot pack (MPI serves it)";

int rankOf(MPI_Comm comm);
int sizeOf(MPI_Comm comm);

// The Strata communicator for a call that may go to Strata, or null (counted as passed to MPI);
// AbortedHere where this rank aborted it (face.h).
strataComm_t servable(Call c, MPI_Comm comm);

// Reductions: a predefined type and op with a Strata equivalent (the same on every rank, as MPI
// requires of a reduction's datatype and op).
strataComm_t reduction(Call c, MPI_Comm comm, MPI_Datatype type, MPI_Op op, strataDataType_t* t, strataRedOp_t* o);

// Data movement: any datatype (packed when not contiguous), provided MPI packs as plain bytes.
strataComm_t movement(Call c, MPI_Comm comm);

// A call this rank passes to MPI while its peers may make it through Strata: an argument only this
// rank got wrong (`why`, a string literal it is counted under; `detail`, where given, says more to
// the peers), or a datatype only it cannot pack. Strata refuses it here (strataCommRefuseCall), so
// their part fails at once, naming the rank, instead of at the communicator's bound; where every
// rank passes the same call, every rank refuses it, the communicator stays usable, and MPI reports
// (or serves) it on every rank. Not where the peers run the MPI library's own collective through
// Strata (`native`): they wait in it, unbounded, as without the refusal. `sc` null (the call is
// not Strata's on any rank): nothing.
void refuseInvalid(Call c, MPI_Comm comm, strataComm_t sc, const char* why, const char* detail = nullptr);

// A call whose arguments this rank cannot serve, as `blocks` described them or failed to: where one
// of `blocks` lacks resources (no memory for its staging), the rank refuses it and aborts
// (refusePacking); else its arguments are wrong, or its datatype one the face cannot pack: refused
// in Strata and passed to MPI to report or serve (refuseInvalid, then `pass`).
template <typename Pass>
int unservable(Call c, MPI_Comm comm, strataComm_t sc, std::initializer_list<const PackedBlocks*> blocks, Pass&& pass) {
  if (const PackedBlocks* f = lackingResources(blocks)) return refusePacking(c, comm, *f);
  const PackedBlocks* f = firstFailed(blocks);
  const bool beyond = f != nullptr && f->beyondPacking();
  refuseInvalid(c, comm, sc, beyond ? kBeyondPacking : kInvalidArguments, f != nullptr ? f->error().c_str() : nullptr);
  return pass();
}

// A root MPI would reject goes to MPI (refused in Strata as refuseInvalid's; every rank of a correct
// program passes the same root).
bool rootInRange(Call c, MPI_Comm comm, strataComm_t sc, int root);

// After a served call: its result unpacked into the user's buffer where it was packed.
int unpacked(Call c, MPI_Comm comm, int rc, PackedBlocks* out);

}  // namespace strata::mpi_face
