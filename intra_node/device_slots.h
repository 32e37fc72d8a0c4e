// DeviceSlots: the node team's slots in device memory, for node ops on device buffers. Each member
// allocates two slots (double-buffered rounds) and maps every other member's through CUDA IPC.
//
// Release follows CUDA IPC's rule: memory a peer has open must not be freed. Every member first
// closes the peers' mappings, the team meets at its barrier, and only then does each free its own.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "intra_node/node_team.h"
#include "kernels/common/status.h"

namespace strata {

constexpr size_t kIpcHandleBytes = 64;  // cudaIpcMemHandle_t

// How a caller runs the steps of setting up and releasing whose CUDA calls may wait for the whole
// device (allocation, free, IPC mapping and unmapping). The device path runs each with its
// allocation gate held and every queued collective of the process finished (src/core/device_path.cc);
// the team's exchanges and barriers run between such steps, never inside one, so no process holds
// its gate while it waits for another. An error from the guard itself (the collectives did not
// finish) is returned without running the step.
using DeviceSyncSteps = std::function<Status(const std::function<Status()>& step)>;

// Destroys `owned` (whose destructor makes such CUDA calls) in one of `steps`; where the step cannot
// run, leaves it allocated rather than freeing it outside one.
template <class T>
void destroyInStep(std::unique_ptr<T>& owned, const DeviceSyncSteps& steps) {
  if (owned != nullptr && !steps([&] { return owned.reset(), Status::Ok(); }).ok()) (void)owned.release();
}

class DeviceSlots {
 public:
  ~DeviceSlots();
  // Collective over the team: each member allocates its slots (2 x slotBytes of device memory on
  // the current device), the members exchange their CUDA IPC handles through the team's control
  // segment, and each maps the others'. An error when any member failed; `out` is then set only if
  // this member mapped some peer's slots (release() unmaps them). The allocation and the mapping
  // each run as one of `steps`; the exchange between them does not.
  static Status setUp(NodeTeam& team, size_t slotBytes, double timeoutSeconds, const DeviceSyncSteps& steps,
                      std::unique_ptr<DeviceSlots>* out);

  // Base of member j's slots in this process.
  const std::vector<char*>& bases() const { return bases_; }
  size_t slotBytes() const { return slotBytes_; }

  // Closes the peers' mappings, then waits (bounded) at the team's barrier until every member has
  // closed its own, then frees this member's slots. With `abandon` (after an abort, when a peer may
  // be gone) it frees nothing of its own: a leak is better than a peer reading freed memory. The
  // unmapping and the free each run as one of `steps`; where the unmapping step could not run at
  // all, this member keeps the peers' slots mapped and so neither meets the team nor frees its own.
  Status release(NodeTeam* team, double timeoutSeconds, bool abandon, const DeviceSyncSteps& steps);

 private:
  DeviceSlots() = default;
  static Status allocate(size_t slotBytes, std::unique_ptr<DeviceSlots>* out, char handle[kIpcHandleBytes]);
  // Maps the other members' slots: handles[j] is member j's (this member's own is skipped).
  Status open(const std::vector<std::vector<char>>& handles, int me);

  void* own_ = nullptr;
  int me_ = 0;
  size_t slotBytes_ = 0;
  std::vector<char*> bases_;
};

}  // namespace strata
