// "native": the MPI library's own collective, a candidate of the tuner when the communicator asks
// for it (strataConfig_t.mpiNative, STRATA_MPI_NATIVE; the MPI face does). It runs the call through
// PMPI_ on the communicator's duplicate, so the model can prefer it where Strata's algorithms are
// not expected to be faster, and a program never gets a collective slower than it had before.
#pragma once

#include "kernels/plan/collective.h"
#include "src/core/communicator.h"

namespace strata {

// Whether the MPI library can run this call: host buffers, a type and op MPI has, counts that fit
// an int, and a collective MPI has (not shift). Depends only on arguments every rank shares.
bool nativeSupports(const CollectiveArgs& args);
// Runs the call on the MPI library (blocking; host buffers).
Status runNative(strataComm* comm, const CollectiveArgs& args, const void* send, void* recv);

}  // namespace strata
