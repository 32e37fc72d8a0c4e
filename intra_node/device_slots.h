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
  // Collective over the team: each member allocates its slots (2 x slotBytes of device memory on
  // the current device), the members exchange their CUDA IPC handles through the team's control
  // segment, and each maps the others'. An error when any member failed; `out` is then set only if
  // this member mapped some peer's slots (release() unmaps them).
  static Status setUp(NodeTeam& team, size_t slotBytes, double timeoutSeconds, std::unique_ptr<DeviceSlots>* out);

  // Base of member j's slots in this process.
  const std::vector<char*>& bases() const { return bases_; }
  size_t slotBytes() const { return slotBytes_; }

  // Closes the peers' mappings, then waits (bounded) at the team's barrier until every member has
  // closed its own, then frees this member's slots. With `abandon` (after an abort, when a peer may
  // be gone) it frees nothing of its own: a leak is better than a peer reading freed memory.
  Status release(NodeTeam* team, double timeoutSeconds, bool abandon);

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
