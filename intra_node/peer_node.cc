#include "intra_node/peer_node.h"

#include <atomic>
#include <cstring>
#include <vector>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_compute.h"

namespace strata {
namespace {

// Host-mapped words: the abort word, then the kernels' status words.
constexpr size_t kAbortWord = 0;
constexpr size_t kStatusWords = 1;

}  // namespace

Status myPciAddress(PciAddress* out) {
  int device = 0;
  STRATA_CHECK_CUDA(cudaGetDevice(&device));
  STRATA_CHECK_CUDA(cudaDeviceGetAttribute(&out->domain, cudaDevAttrPciDomainId, device));
  STRATA_CHECK_CUDA(cudaDeviceGetAttribute(&out->bus, cudaDevAttrPciBusId, device));
  STRATA_CHECK_CUDA(cudaDeviceGetAttribute(&out->device, cudaDevAttrPciDeviceId, device));
  return Status::Ok();
}

PeerNodeTeam::~PeerNodeTeam() {
  if (last_ != nullptr) cudaEventDestroy(last_);
  if (stopped_ != nullptr) cudaEventDestroy(stopped_);
  if (stopStream_ != nullptr) cudaStreamDestroy(stopStream_);
  if (hostWords_ != nullptr && !wordsLeaked_) cudaFreeHost(hostWords_);
}

Status exchangeNodeGpus(NodeTeam& team, double timeoutSeconds, NodeGpus* out) {
  // Every member sees the same addresses, so all decide alike.
  struct Entry {
    PciAddress pci;
    int32_t ok;
  };
  Entry mine{};
  mine.ok = myPciAddress(&mine.pci).ok() ? 1 : 0;
  std::vector<Entry> all(static_cast<size_t>(team.size()));
  STRATA_CHECK(team.exchange(&mine, sizeof mine, all.data(), timeoutSeconds));
  NodeGpus g;
  g.own = true;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].ok != 1) g.own = false;
    for (size_t j = 0; j < i; ++j) {
      if (all[i].ok == 1 && all[j].ok == 1 && all[i].pci == all[j].pci) g.shared = true;
    }
  }
  if (g.shared) g.own = false;
  *out = g;
  return Status::Ok();
}

Status PeerNodeTeam::setUp(NodeTeam& team, size_t halfBytes, double timeoutSeconds, const DeviceSyncSteps& steps,
                           std::unique_ptr<PeerNodeTeam>* out) {
  out->reset();
  STRATA_REQUIRE(team.size() <= cuda::kMaxPeerRanks, strataInvalidUsage,
                 "peer collectives serve nodes of at most %d ranks (this one has %d)", cuda::kMaxPeerRanks, team.size());
  out->reset(new PeerNodeTeam);
  PeerNodeTeam* p = out->get();  // from here on, release() undoes whatever was set up
  const size_t half = halfBytes / 16 * 16;
  STRATA_CHECK(DeviceSlots::setUp(team, cuda::kPeerSignalBytes + half, timeoutSeconds, steps, &p->slots_));
  void* deviceWords = nullptr;
  STRATA_CHECK(steps([&] {
    void* words = nullptr;
    STRATA_CHECK_CUDA(cudaHostAlloc(&words, 64, cudaHostAllocMapped));
    p->hostWords_ = static_cast<uint32_t*>(words);
    std::memset(words, 0, 64);
    STRATA_CHECK_CUDA(cudaHostGetDevicePointer(&deviceWords, words, 0));
    STRATA_CHECK_CUDA(cudaEventCreateWithFlags(&p->last_, cudaEventDisableTiming));
    STRATA_CHECK_CUDA(cudaEventCreateWithFlags(&p->stopped_, cudaEventDisableTiming));
    STRATA_CHECK_CUDA(cudaStreamCreateWithFlags(&p->stopStream_, cudaStreamNonBlocking));
    return Status::Ok();
  }));
  cuda::PeerNode& n = p->node_;
  const std::vector<char*>& bases = p->slots_->bases();
  for (int j = 0; j < team.size(); ++j) {
    n.signals[j] = reinterpret_cast<uint32_t*>(bases[static_cast<size_t>(j)]);
    n.halves[j] = bases[static_cast<size_t>(j)] + cuda::kPeerSignalBytes;
  }
  n.halfBytes = half;
  n.halfStride = p->slots_->slotBytes();
  n.ranks = team.size();
  n.me = team.me();
  n.abortWord = static_cast<const volatile uint32_t*>(deviceWords) + kAbortWord;
  n.status = static_cast<uint32_t*>(deviceWords) + kStatusWords;
  n.timeoutNs = static_cast<unsigned long long>(timeoutSeconds * 1e9);
  return Status::Ok();
}

Status PeerNodeTeam::kernelStatus() const {
  // The code first: the kernel stores it after the rest of its record (recordPeerStatus).
  const volatile uint32_t* s = hostWords_ + kStatusWords;
  const uint32_t code = s[cuda::kPeerStatusCode];
  std::atomic_thread_fence(std::memory_order_acquire);
  switch (code) {
    case cuda::kPeerOk: return Status::Ok();
    case cuda::kPeerTimedOut:
      return makeStatus(strataTimeout,
                        "a peer collective kernel timed out after %.0f s: its block %u waited for node member %u at "
                        "barrier %u (that member's kernel never reached it)",
                        static_cast<double>(node_.timeoutNs) * 1e-9, s[cuda::kPeerStatusBlock],
                        s[cuda::kPeerStatusMember], s[cuda::kPeerStatusBarrier]);
    case cuda::kPeerRefused:
    case cuda::kPeerMemberFailed:
      return makeStatus(strataRemoteError, "a peer collective kernel stopped: its block %u waited for node member %u at "
                        "barrier %u, and that member %s", s[cuda::kPeerStatusBlock], s[cuda::kPeerStatusMember],
                        s[cuda::kPeerStatusBarrier], code == cuda::kPeerRefused
                            ? "refused the call" : "failed, was aborted or stopped");
    case cuda::kPeerAborted: return makeStatus(strataInvalidUsage, "the communicator was aborted");
    default: return makeStatus(strataInternalError, "peer collective kernel status %u", code);
  }
}

bool PeerNodeTeam::stoppedByRefusal() const {
  return static_cast<const volatile uint32_t*>(hostWords_ + kStatusWords)[cuda::kPeerStatusCode] == cuda::kPeerRefused;
}

void PeerNodeTeam::abort() {
  if (hostWords_ != nullptr) static_cast<volatile uint32_t*>(hostWords_)[kAbortWord] = 1;
}

Status PeerNodeTeam::stopPeers(uint64_t seq, bool failed) {
  std::lock_guard<std::mutex> lock(stopMutex_);
  if (stopStream_ == nullptr || stopsClosed_) return Status::Ok();
  // A failure's record only after this member's own kernels: they complete the calls it made (or
  // stop and tell the others themselves), and a record landing earlier would stop the others'
  // kernels of those calls, which had returned success, part-way.
  if (failed && launched_) STRATA_CHECK_CUDA(cudaStreamWaitEvent(stopStream_, last_, 0));
  STRATA_CHECK(cuda::launchPeerStop(node_, seq, failed, stopStream_));
  STRATA_CHECK_CUDA(cudaEventRecord(stopped_, stopStream_));
  stopPending_ = true;
  stopsLaunched_ = true;
  return Status::Ok();
}

Status PeerNodeTeam::run(cuda::PeerCall call, DataType type, RedOp op, cudaStream_t stream) {
  STRATA_CHECK(kernelStatus());
  call.barriers = barriers_;
  call.rounds = rounds_;
  const cuda::PeerSchedule s = cuda::peerSchedule(node_, call, dataTypeSize(type));
  lastSchedule_ = s;
  if (s.rounds == 0) return Status::Ok();
  std::lock_guard<std::mutex> lock(stopMutex_);
  if (launched_) STRATA_CHECK_CUDA(cudaStreamWaitEvent(stream, last_, 0));
  // The stop records this member wrote land before its next kernel runs: else that kernel, stopping
  // for the members those records stopped, could tell a member that it failed before the refusal
  // that explains it arrived there (memberStopped prefers the refusal only once it is seen).
  if (stopPending_) STRATA_CHECK_CUDA(cudaStreamWaitEvent(stream, stopped_, 0));
  stopPending_ = false;
  STRATA_CHECK(cuda::launchPeerCollective(node_, call, type, op, stream));
  STRATA_CHECK_CUDA(cudaEventRecord(last_, stream));
  launched_ = true;
  barriers_ += s.barriers;
  rounds_ += s.rounds;
  return Status::Ok();
}

Status PeerNodeTeam::release(NodeTeam* team, double timeoutSeconds, bool abandon, const DeviceSyncSteps& steps) {
  Status status;
  {
    std::lock_guard<std::mutex> lock(stopMutex_);
    stopsClosed_ = true;  // no stop kernel after this one's wait: it would write into unmapped buffers
  }
  if (launched_ || stopsLaunched_) {
    // The last kernel may still read and signal the peers' buffers, and a stop kernel write their
    // stop records: they end before the buffers are unmapped. After an abort a collective kernel
    // returns at its next poll; if one does not end in time, nothing is unmapped or freed (a leak
    // is better than a kernel writing into memory that went away).
    WaitPolicy policy;
    policy.timeoutSeconds = timeoutSeconds;
    Status done = launched_ ? waitForEvent(last_, policy, "the last peer collective kernel") : Status::Ok();
    if (done.ok() && stopsLaunched_) done = waitForStream(stopStream_, policy, "the peer stop kernel");
    if (!done.ok()) {
      (void)slots_.release();  // leaked on purpose: its destructor would unmap and free
      wordsLeaked_ = true;     // the kernel may still read them; an abort may still write them
      return done;
    }
  }
  if (slots_ != nullptr) status.update(slots_->release(team, timeoutSeconds, abandon, steps));
  slots_.reset();
  return status;
}

}  // namespace strata
