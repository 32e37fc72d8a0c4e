#include "intra_node/device_slots.h"

#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <cstring>

#include "kernels/cuda/cuda_check.h"

namespace strata {

DeviceSlots::~DeviceSlots() {
  // Reached without release() only when setting up failed: nobody else opened the slots.
  for (size_t j = 0; j < bases_.size(); ++j) {
    if (static_cast<int>(j) != me_ && bases_[j] != nullptr) cudaIpcCloseMemHandle(bases_[j]);
  }
  if (own_ != nullptr) cudaFree(own_);
}

Status DeviceSlots::setUp(NodeTeam& team, size_t slotBytes, double timeoutSeconds, const DeviceSyncSteps& steps,
                          std::unique_ptr<DeviceSlots>* out) {
  struct Entry {
    char handle[kIpcHandleBytes];
    int32_t ok;
  };
  static_assert(sizeof(Entry) <= NodeTeam::kMailboxBytes);
  Entry mine{};
  std::unique_ptr<DeviceSlots> slots;
  const Status allocated = steps([&] { return allocate(slotBytes, &slots, mine.handle); });
  mine.ok = allocated.ok() ? 1 : 0;
  std::vector<Entry> all(static_cast<size_t>(team.size()));
  const Status exchanged = team.exchange(&mine, sizeof mine, all.data(), timeoutSeconds);
  if (!exchanged.ok()) {
    (void)slots.release();  // the peers may have read our handle before the exchange failed here: kept
    return exchanged;
  }
  STRATA_CHECK(allocated);
  // Nobody maps anything unless every member has its slots: where one could not allocate, every
  // member saw it and nobody mapped ours, which are freed in a step.
  for (int j = 0; j < team.size(); ++j) {
    if (all[static_cast<size_t>(j)].ok != 1) {
      destroyInStep(slots, steps);
      return makeStatus(strataSystemError, "node member %d could not allocate its device slots", j);
    }
  }
  std::vector<std::vector<char>> handles(all.size());
  for (size_t j = 0; j < all.size(); ++j) handles[j].assign(all[j].handle, all[j].handle + kIpcHandleBytes);
  const Status opened = steps([&] { return slots->open(handles, team.me()); });
  *out = std::move(slots);  // mapped in full or in part: release() undoes it
  return opened;
}

Status DeviceSlots::allocate(size_t slotBytes, std::unique_ptr<DeviceSlots>* out, char handle[kIpcHandleBytes]) {
  std::unique_ptr<DeviceSlots> s(new DeviceSlots);
  s->slotBytes_ = slotBytes;
  STRATA_CHECK_CUDA(cudaMalloc(&s->own_, 2 * slotBytes));
  // Zeroed before any peer maps them: flags kept in slots start at 0 (fresh memory is garbage).
  STRATA_CHECK_CUDA(cudaMemset(s->own_, 0, 2 * slotBytes));
  STRATA_CHECK_CUDA(cudaDeviceSynchronize());
  cudaIpcMemHandle_t h;
  static_assert(sizeof h == kIpcHandleBytes);
  STRATA_CHECK_CUDA(cudaIpcGetMemHandle(&h, s->own_));
  std::memcpy(handle, &h, sizeof h);
  *out = std::move(s);
  return Status::Ok();
}

Status DeviceSlots::open(const std::vector<std::vector<char>>& handles, int me) {
  me_ = me;
  bases_.assign(handles.size(), nullptr);
  for (size_t j = 0; j < handles.size(); ++j) {
    if (static_cast<int>(j) == me) {
      bases_[j] = static_cast<char*>(own_);
      continue;
    }
    cudaIpcMemHandle_t h;
    std::memcpy(&h, handles[j].data(), sizeof h);
    void* p = nullptr;
    STRATA_CHECK_CUDA(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess));
    bases_[j] = static_cast<char*>(p);
  }
  return Status::Ok();
}

Status DeviceSlots::release(NodeTeam* team, double timeoutSeconds, bool abandon, const DeviceSyncSteps& steps) {
  bool unmapped = false;
  Status status = steps([&] {
    unmapped = true;
    Status closed;
    for (size_t j = 0; j < bases_.size(); ++j) {
      if (static_cast<int>(j) == me_ || bases_[j] == nullptr) continue;
      closed.update(cudaCheck(cudaIpcCloseMemHandle(bases_[j]), "cudaIpcCloseMemHandle", STRATA_WHERE));
      bases_[j] = nullptr;
    }
    return closed;
  });
  // The step could not run (another communicator's device work did not finish): the peers' slots
  // stay mapped here, so this member must not tell them at the barrier that it is done with them.
  if (!unmapped) abandon = true;
  if (!abandon && team != nullptr) {
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeoutSeconds));
    Status met = team->barrier(deadline, "releasing the device slots (every member closes its peers' mappings)");
    if (!met.ok()) abandon = true;  // a member did not arrive: it may still read our slots
    status.update(met);
  }
  if (!abandon && own_ != nullptr) status.update(steps([&] { return cudaCheck(cudaFree(own_), "cudaFree", STRATA_WHERE); }));
  own_ = nullptr;  // abandoned or freed (or its free failed): the destructor must not free it
  bases_.clear();
  return status;
}

}  // namespace strata
