// DeviceSlots: the node team's slots in device memory, for node ops on device buffers. Each member
// allocates two slots (double-buffered rounds) and maps every other member's through CUDA IPC.
//
// Release follows CUDA IPC's rule: memory a peer has open must not be freed. Every member first
// closes the peers' mappings, the team meets at its barrier, and only then does each free its own.
#pragma once

#include <memory>
#include <vector>

#include "intra_node/node_team.h"
#include "kernels/common/status.h"

namespace strata {

constexpr size_t kIpcHandleBytes = 64;  // cudaIpcMemHandle_t

class DeviceSlots {
 public:
  ~DeviceSlots();
  // This member's slots (2 x slotBytes of device memory on the current device) and the handle
  // the other members open them with.
  static Status allocate(size_t slotBytes, std::unique_ptr<DeviceSlots>* out, char handle[kIpcHandleBytes]);
  // Maps the other members' slots: handles[j] is member j's (this member's own is skipped).
  Status open(const std::vector<std::vector<char>>& handles, int me);

  // Base of member j's slots in this process.
  const std::vector<char*>& bases() const { return bases_; }
  size_t slotBytes() const { return slotBytes_; }

  // Closes the peers' mappings, then waits (bounded) at the team's barrier until every member has
  // closed its own, then frees this member's slots. With `abandon` (after an abort, when a peer may
  // be gone) it frees nothing of its own: a leak is better than a peer reading freed memory.
  Status release(NodeTeam* team, double timeoutSeconds, bool abandon);

 private:
  DeviceSlots() = default;
  void* own_ = nullptr;
  int me_ = 0;
  size_t slotBytes_ = 0;
  std::vector<char*> bases_;
};

}  // namespace strata
