// Configuration of a communicator: the strataConfig_t fields the caller set, then the environment,
// then defaults. This is the one place the library reads its environment variables (the README's
// Configuration table lists them), each strictly: a malformed value is an error at communicator
// creation that names the variable and the value, never ignored or read half.
#pragma once

#include <strata/strata.h>

#include <map>
#include <string>
#include <vector>

#include "kernels/common/status.h"
#include "kernels/plan/collective.h"

namespace strata {

constexpr double kDefaultTimeoutSeconds = 300.0;
// The longest bound a wait may have (a finite deadline the clock can represent): 11.6 days.
constexpr double kMaxTimeoutSeconds = 1e6;

// How a caller's stream waits for the progress thread (src/core/stream_gate.h): the driver's
// stream wait-value operation where the driver runs it (probed at setup), else a polling kernel
// (kAuto); or one of them forced (STRATA_STREAM_GATE=value or kernel).
enum class StreamGateMode { kAuto, kWaitValue, kKernel };

struct Config {
  // Empty: discover nodes with MPI_Comm_split_type. One value k: virtual nodes of k consecutive
  // ranks (the last one may be smaller). Several values: explicit node sizes in rank order.
  std::vector<int> nodeShape;
  int cudaAwareMpi = -1;
  double timeoutSeconds = kDefaultTimeoutSeconds;
  // Forced algorithms: per collective, or for every collective ("" key).
  std::map<std::string, std::string> forcedAlgorithm;
  size_t maxMessageBytes = size_t{1} << 30;
  std::string topoFile;  // calibrated cost parameters (STRATA_TOPO_FILE)
  bool mpiNative = false;  // the MPI library's own collective is a candidate (src/core/native_runner.h)
  // Waits (kernels/common/bounded_wait.h): spin this long before yielding the core; < 0: by how
  // many of the communicator's processes share the host's cores (STRATA_WAIT_SPIN_US).
  double waitSpinSeconds = -1;
  // The device path: the pinned staging pool's slots (bytes; 0: chunks sized per message) and their
  // number per direction (STRATA_STAGE_CHUNK, STRATA_STAGE_SLOTS), each device node slot's bytes
  // (STRATA_DEVICE_SLOT), whether device calls run on the calling thread (STRATA_DEVICE_SYNC: 1
  // yes, 0 through the progress thread, -1 unset: chosen when the path is set up, device_path.cc),
  // and how a caller's stream is held for the progress thread (STRATA_STREAM_GATE).
  size_t stageChunkBytes = 0;
  int stageSlots = 8;
  size_t deviceSlotBytes = size_t{16} << 20;
  int deviceSync = -1;
  StreamGateMode streamGate = StreamGateMode::kAuto;
  // Each half of a rank's peer buffer for the single-kernel node collectives (STRATA_PEER_BUFFER;
  // 0: none, the node rounds go through the host), and the device cost model's parameter file
  // (STRATA_DEVICE_PARAMS; empty: an H100 node's, src/tuning/device_model.h).
  size_t peerHalfBytes = size_t{8} << 20;
  std::string deviceParamsFile;

  // The forced algorithm of a collective, or "" for the tuner's choice.
  std::string forcedFor(Collective c) const;
};

// "4" -> {4}; "3,5" -> {3, 5}.
Status parseNodeShape(const char* text, std::vector<int>* out);
// "ring" forces ring wherever a collective has it; "allreduce=ring,broadcast=chain" per collective.
Status parseAlgorithmSpec(const char* text, std::map<std::string, std::string>* out);
Status resolveConfig(const strataConfig_t* user, Config* out);

}  // namespace strata
