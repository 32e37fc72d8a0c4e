// The MPI face's bookkeeping: which collectives it intercepts (STRATA_MPI_COLLECTIVES), one Strata
// communicator per MPI communicator (kept in an attribute, destroyed by the attribute's delete
// callback), the counts of calls served and passed on (printed at MPI_Finalize under
// STRATA_DEBUG=INFO), errors handed to the communicator's MPI error handler, and the guard that
// sends Strata's own MPI calls straight to the MPI library.
#pragma once

#include <mpi.h>
#include <strata/strata.h>

#include <new>
#include <string>

namespace strata::mpi_face {

enum class Call : int {
  kAllreduce,
  kBcast,
  kReduce,
  kAllgather,
  kAllgatherv,
  kReduceScatterBlock,
  kReduceScatter,
  kAlltoall,
  kAlltoallv,
  kGather,
  kGatherv,
  kScatter,
  kScatterv,
  kScan,
  kExscan,
  kBarrier,
};
constexpr int kNumCalls = 16;
const char* callName(Call c);  // "allreduce", "bcast", ... (the names STRATA_MPI_COLLECTIVES takes)

// Set while the face (or Strata under it) runs: MPI calls made meanwhile go to the MPI library.
class Guard {
 public:
  Guard();
  ~Guard();
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;
  static bool active();
};

// Whether `c` on `comm` may go to Strata at all (intercepted, not inside Strata, an
// intracommunicator); `why` says why not.
bool mayServe(Call c, MPI_Comm comm, const char** why);
// The Strata communicator of `comm`, created at its first intercepted collective (collective over
// `comm`). Null when it could not be created (`why` says why; the call then goes to MPI);
// AbortedHere where this rank aborted it.
strataComm_t strataCommOf(MPI_Comm comm, const char** why);

// Whether `p` is device or managed memory, as Strata classifies a buffer (src/core/memory_space.h):
// such a call runs on Strata's device path, so the face's scratch, staging and result copies for it
// are device memory too. False for host memory, null, and in a build without CUDA.
bool onDevice(const void* p);

// Thrown where a call is made on a communicator whose Strata communicator this rank aborted: the
// call fails at once (entryPoint: failAborted), before it stages anything or reaches Strata.
struct AbortedHere {};
// The error of a call made after the abort, through the communicator's handler (failServed's).
int failAborted(Call c, MPI_Comm comm);

// Counts the call as passed to the MPI library for `why` (a string literal); where there is no host
// memory for the count, the call goes uncounted.
void countPassed(Call c, const char* why) noexcept;
// Counts the call as served, waits for a device result, and turns a Strata error into what the
// communicator's MPI error handler makes of it.
int finishServed(Call c, MPI_Comm comm, strataComm_t sc, strataResult_t rc, const void* probe);
// A served call that failed, in Strata or outside it (packing, moving a result): the face's error
// code of `errorClass`, whose MPI_Error_string is `what`, goes to the communicator's MPI error
// handler.
int failServed(Call c, MPI_Comm comm, int errorClass, const std::string& what);
// A rank that cannot take its part in a call its peers make through Strata (no memory for its
// staging or scratch, a failed pack or copy before the call): it aborts `sc` (where it has peers),
// which tells them, so their part of the call fails at once (strataRemoteError) instead of waiting
// for it until the communicator's bound; its own error goes to the handler as failServed's. The
// communicator fails on every rank, as after any failed collective. Under MPI_THREAD_SERIALIZED on
// a thread other than the main one the abort tells no peer (strataCommAbort's rule).
int refuseServed(Call c, MPI_Comm comm, int errorClass, const std::string& what);

// Where the host had no memory for the face's own allocations (an error's message, its
// bookkeeping: std::bad_alloc left an entry point's body): the Strata communicator of `comm`, where
// it is live, usable and has peers, is aborted, so peers in a Strata call fail at once (a call that
// had succeeded on them leaves the communicator failed for the next, as any abort), and MPI's own
// MPI_ERR_NO_MEM, which needs no string, goes to the communicator's MPI error handler. Nothing
// allocated here.
int outOfMemory(Call c, MPI_Comm comm);

// An MPI entry point's body: std::bad_alloc does not cross the C boundary (outOfMemory()). Any
// other exception is the program's own (its error handler's, called from within MPI), and goes on
// to it.
template <typename Body>
int entryPoint(Call c, MPI_Comm comm, Body&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return outOfMemory(c, comm);
  } catch (const AbortedHere&) {
    return failAborted(c, comm);
  }
}

}  // namespace strata::mpi_face
