// Collectives on device buffers: the tuner's flat plan run by the executor on the device's lanes
// (kernels on a compute stream, staged or device-aware messages), ordered on the caller's stream.
//
// Stream semantics (DESIGN.md 5): the call records an event on `stream`, makes `stream` wait until
// a host-written counter reaches the call's ticket (the driver's stream wait-value operation, or
// else a one-thread kernel that polls with a bound), queues the work and returns. The
// communicator's progress thread waits for the event, runs the plan, and writes the ticket; an
// error, a timeout or strataCommAbort writes it too, so no stream is left waiting. The error is
// reported by the communicator's next call (and strataGetLastError). The progress thread needs
// MPI_THREAD_MULTIPLE; under a lower thread level the call runs on the calling thread and returns
// when done (still after the stream's prior work).
//
// CUDA's allocation calls synchronise the device, so the path allocates (setup, growth of its
// staging and scratch, teardown) only behind a process-wide gate, with no stream of the process
// waiting for one of its tickets. A capturing stream is refused: a graph cannot replay the wait.
#pragma once

#include "kernels/plan/collective.h"
#include "src/core/communicator.h"

namespace strata {

// Runs (or queues) one validated collective with args.device set.
Status runDeviceCollective(strataComm* comm, const CollectiveArgs& args, const void* send, void* recv,
                           cudaStream_t stream);

// Waits (bounded) until the communicator's queued device collectives are done; returns an error
// one of them ended with.
Status drainDevicePath(strataComm* comm);

// What failed in the communicator's device work since its calls last looked (strataCommGetAsyncError):
// a queued collective, a stream's wait for one on the device, a peer collective kernel that stopped
// or timed out; Ok when nothing did. Any thread, any time: it neither waits nor communicates.
Status deviceAsyncError(strataComm* comm);

// The last call's schedule when it ran as a peer collective (its rounds and barriers); false when
// it did not.
bool lastPeerSchedule(const strataComm* comm, double* rounds, double* barriers);
// Whether the communicator's device calls are queued for its progress thread (ordered on the
// caller's stream) rather than run on the calling thread: false before its first device call.
bool deviceCallsQueued(const strataComm* comm);

// strataCommAbort: device kernels waiting at a barrier (the peer collectives) return.
void abortDevicePath(strataComm* comm);

// This rank refused call `seq`, or (`failed`) its communicator failed: the peer collective kernels
// of the node's other members stop waiting for it (kernels/cuda/peer_collectives.h, the stop
// records) instead of waiting out their bound and trapping. Called by the communicator's own
// calls (never beside its teardown); a no-op without peer collectives.
void stopPeerKernels(strataComm* comm, unsigned long long seq, bool failed);

// At destroy or abort: ends queued work (with an error when aborted), releases every stream still
// waiting on this communicator, stops the progress thread, frees the lanes.
void stopDevicePath(strataComm* comm);

}  // namespace strata
