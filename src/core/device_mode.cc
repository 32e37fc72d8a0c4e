#include "src/core/device_mode.h"

#include <cstdlib>
#include <cstring>

namespace strata {
namespace {

// CUDA reads a variable set to a number: "0" (or unset) is off.
bool setNonZero(const char* v) { return v != nullptr && *v != '\0' && std::strtol(v, nullptr, 10) != 0; }

}  // namespace

Status chooseDeviceMode(const Config& config, bool mpiThreadMultiple, const char* launchBlocking,
                        const char* maxConnections, bool sharedGpu, DeviceMode* out) {
  // CUDA's settings under which the progress thread stalls behind a held stream (both seen to hang
  // the first collective on an H200 with either way of holding the stream, tests/gpu/CMakeLists.txt).
  const char* stall = nullptr;
  if (setNonZero(launchBlocking)) {
    stall = "CUDA_LAUNCH_BLOCKING is set: launches and stream operations return only when done, and the "
            "progress thread stalls behind the held stream";
  } else if (maxConnections != nullptr && std::strtol(maxConnections, nullptr, 10) == 1) {
    stall = "CUDA_DEVICE_MAX_CONNECTIONS=1: every stream shares one hardware queue, where the caller's next "
            "operation on its held stream is queued ahead of the progress thread's work";
  }
  DeviceMode m;
  if (config.deviceSync == 1) {
    m.why = "synchronous (STRATA_DEVICE_SYNC=1)";
  } else if (config.deviceSync == 0) {
    STRATA_REQUIRE(mpiThreadMultiple, strataInvalidUsage,
                   "STRATA_DEVICE_SYNC=0 asks for the progress thread, which needs MPI initialised with "
                   "MPI_THREAD_MULTIPLE (MPI_Init_thread)");
    STRATA_REQUIRE(stall == nullptr, strataInvalidUsage,
                   "STRATA_DEVICE_SYNC=0 asks for the progress thread, but %s; unset STRATA_DEVICE_SYNC", stall);
    m.async = true;
    m.why = "asynchronous (progress thread, STRATA_DEVICE_SYNC=0)";
  } else if (!mpiThreadMultiple) {
    m.why = "synchronous (MPI is not MPI_THREAD_MULTIPLE)";
  } else if (stall != nullptr) {
    m.why = std::string("synchronous (") + stall + ")";
  } else if (sharedGpu) {
    m.why = "synchronous (ranks of this node share a GPU, whose time slices between their contexts a held stream "
            "would wait out; STRATA_DEVICE_SYNC=0 where MPS serves them)";
  } else {
    m.async = true;
    m.why = "asynchronous (progress thread)";
  }
  if (!m.async && config.streamGate != StreamGateMode::kAuto) m.why += " (STRATA_STREAM_GATE unused: no stream is held)";
  *out = m;
  return Status::Ok();
}

}  // namespace strata
