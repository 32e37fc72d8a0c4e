// Helpers of the MPI tests: communicators per (node shape, forced algorithm), cross-rank agreement
// on failures, and the reference oracle.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>
#include <strata/strata.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "tests/reference/reference.h"

namespace strata::test {

int worldRank();
int worldSize();

// A communicator over MPI_COMM_WORLD with virtual nodes `shape` ("0": discover, "4": nodes of 4
// ranks, "3,5": explicit sizes) and `algorithm` forced ("" for the tuner). Created once, reused.
strataComm_t commFor(const std::string& shape, const std::string& algorithm);
void releaseComms();
// Node shapes worth testing on p ranks.
std::vector<std::string> shapesFor(int p);

// Collective agreement: true on every rank when `localOk` holds on every rank.
bool allRanksOk(bool localOk);

// memcpy for buffers that may be empty: an empty std::vector's data() is null, and null is never a
// valid memcpy argument, even for 0 bytes (UndefinedBehaviorSanitizer reports it).
inline void copyBytes(void* dst, const void* src, size_t bytes) {
  if (bytes != 0) std::memcpy(dst, src, bytes);
}

// The matrix on device buffers (STRATA_TEST_DEVICE=1, on a machine with a CUDA device): a call's
// guarded host buffers, guards included, are copied into device memory, the call gets the device
// addresses at the same offsets and a stream, and after the stream completes everything is
// copied back, so the same host-side checks (values, untouched bytes, guards) judge the device
// path. Without it the call runs on the host buffers unchanged.
bool testOnDevice();
// Agrees over MPI_COMM_WORLD: false (and says why on rank 0) when device mode was asked for but a
// rank has no device, so the test binary can skip as a whole.
bool deviceModeUsable();

class Translate {
 public:
  // The device address of `host` (inside one of the mirrored buffers), or `host` itself.
  void* operator()(const void* host) const;
  std::vector<std::pair<GuardedBuffer*, void*>> mirrors;
};

// Runs `call(translate, stream)` on device mirrors of `buffers` (or on the host buffers).
strataResult_t onDevice(std::initializer_list<GuardedBuffer*> buffers,
                        const std::function<strataResult_t(const Translate&, cudaStream_t)>& call);

}  // namespace strata::test
