// How a communicator's device collectives run: queued for a progress thread while the caller's
// stream is held (asynchronous), or on the calling thread (synchronous), and how a held stream
// waits. Chosen once, when the device path is set up (device_path.cc); a pure function of the
// configuration, MPI's thread level and CUDA's own environment, so it is unit-tested.
#pragma once

#include <string>

#include "kernels/common/status.h"
#include "src/core/config.h"

namespace strata {

struct DeviceMode {
  bool async = false;
  std::string why;  // for the log: what decided it
};

// `launchBlocking` and `maxConnections`: CUDA_LAUNCH_BLOCKING and CUDA_DEVICE_MAX_CONNECTIONS as
// the process has them (nullptr: unset). Either setting stalls the progress thread behind a held
// stream: CUDA_LAUNCH_BLOCKING=1 makes launches and stream operations return only when done, and
// CUDA_DEVICE_MAX_CONNECTIONS=1 puts every stream in one hardware queue, where the caller's next
// operation on the held stream, enqueued before the progress thread's work, cannot start until the
// ticket, and the progress thread's work cannot start before it (so holding the stream with a
// running kernel instead of a wait-value does not help). On an H200 the first collective hung under
// each setting, with either way of holding the stream; the simulator models the one queue. So with
// either the device calls run synchronously, and forcing the progress thread (STRATA_DEVICE_SYNC=0)
// is an error, as is forcing it where MPI is not MPI_THREAD_MULTIPLE.
//
// `sharedGpu`: two ranks of the node run on the same GPU, their processes' CUDA contexts taking
// turns on it. On an H200 shared by 2 ranks every host-synchronised node step took a constant
// 8.0 ms asynchronously, whatever its size and either way the stream was held, and 0.56 ms
// synchronously (a 1 MiB allreduce 15.4 ms against 1.16 ms; at 4 ranks both modes took the same,
// perf/results/device_h200.md): the constant points at the GPU's time slice between contexts, a
// context whose stream is held keeping its slice. So those ranks run synchronously unless forced;
// STRATA_DEVICE_SYNC=0 is for a GPU shared through MPS, whose clients share one context.
Status chooseDeviceMode(const Config& config, bool mpiThreadMultiple, const char* launchBlocking,
                        const char* maxConnections, bool sharedGpu, DeviceMode* out);

}  // namespace strata
