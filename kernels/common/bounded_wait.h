// The one wait of the library. Every waiter (the executor's messages and device queues, the staging
// pipeline, the node team's flags and barrier, the device path's events, the progress thread's
// drain, the ranks' plan agreement) polls through a Waiter, so every wait is bounded, can be
// aborted, says what it waited for, and treats the core it runs on by one policy.
//
// The policy: while a wait is younger than `spinSeconds` it spins (a CPU pause between polls);
// after that it yields the core between polls. The spin is measured in time, not in polls: a yield
// hands the core to any other runnable process for a time slice, even one at nice 19, and spinning
// only a few hundred polls before yielding cost a 2-rank allreduce (32 KiB - 2 MiB) half its speed
// under one CPU-bound background process per core, where the MPI library's shared-memory transport,
// which spins, kept its speed. Yielding early is right when the communicator's own processes
// outnumber the host's cores: then the peer being waited for may need this very core.
//
// A wait also ends when the communicator's peers say it cannot finish (`WaitPolicy::peers`: a peer
// refused the call or its communicator failed, src/core/peer_notices.h), instead of at the bound.
//
// Thread contract: a Waiter belongs to one thread; the abort flag may be set from any thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "kernels/common/status.h"

namespace strata {

// What a communicator's peers said (src/core/peer_notices.h), read by its waits with the abort flag.
class PeerCheck {
 public:
  // Reads what arrived. Ok, or the error that ends the wait (a peer refused the call this rank
  // waits in, or its communicator failed): every later poll returns it too.
  virtual Status poll() = 0;

 protected:
  ~PeerCheck() = default;
};

struct WaitPolicy {
  double timeoutSeconds = 300;                   // give up after this long without progress (strataTimeout)
  double spinSeconds = 0;                        // spin this long, then yield between polls
  const std::atomic<bool>* abortFlag = nullptr;  // set: give up (strataInvalidUsage)
  PeerCheck* peers = nullptr;                    // its error: give up (strataRemoteError)

  // The default spin for a host running `processesOnHost` of the communicator's processes: a few
  // milliseconds when they fit its cores (longer than the waits of a collective that is on its
  // way), a few microseconds when they do not.
  static double defaultSpinSeconds(int processesOnHost);
};

class Waiter {
 public:
  explicit Waiter(const WaitPolicy& policy) : policy_(policy) {}

  // After a poll that found nothing done: spins or yields, and checks the abort flag and the bound.
  // Ok to poll again; otherwise the error, naming what() (called only then).
  template <typename What>
  Status idle(What&& what) {
    if (polls_++ == 0) {  // 64 bits: a counter that wrapped would restart the bound
      start_ = Clock::now();
      lastCheck_ = start_;
      longestGap_ = 0;
      expired_ = false;
      yielding_ = policy_.spinSeconds <= 0;
    }
    if ((polls_ & 15) == 0) {
      if (policy_.abortFlag != nullptr && policy_.abortFlag->load(std::memory_order_relaxed)) {
        return makeStatus(strataInvalidUsage, "the communicator was aborted (strataCommAbort) while waiting for %s",
                          std::string(what()).c_str());
      }
      const Clock::time_point now = Clock::now();
      const double waited = std::chrono::duration<double>(now - start_).count();
      // The peers' word only in a wait that lasts: one that ends in microseconds (a small call's)
      // would pay for reading it on every call, and a peer that failed makes this wait last.
      if (policy_.peers != nullptr && waited >= kPeersAfterSeconds) {
        const Status heard = policy_.peers->poll();
        if (!heard.ok()) {
          return Status(heard.code(), heard.message() + ", while this rank waited for " + std::string(what()));
        }
      }
      // 16 polls take microseconds to milliseconds: a long gap means this thread was held
      // elsewhere (blocked in a call, or not scheduled), so the wait may have run out while it was
      // not looking, and the peers may have waited for it.
      longestGap_ = std::max(longestGap_, std::chrono::duration<double>(now - lastCheck_).count());
      lastCheck_ = now;
      // The bound has passed, but the poll before this check may have been made long before it
      // (the thread away in between): the wait fails only at a check after polls made past the
      // bound, so what it reports is the state then, not a stale one, and a wait whose condition
      // came true while its thread was away ends well.
      if (waited > policy_.timeoutSeconds && !expired_) {
        expired_ = true;
      } else if (waited > policy_.timeoutSeconds) {
        std::string away;
        if (longestGap_ >= kReportedGapSeconds) {
          away = strformat(" (this thread went %.1f s between two of its polls: it was blocked or not scheduled)",
                           longestGap_);
        }
        return makeStatus(strataTimeout, "timed out after %.1f s waiting for %s%s", waited,
                          std::string(what()).c_str(), away.c_str());
      }
      yielding_ = waited >= policy_.spinSeconds;
    }
    if (yielding_) {
      yieldCore();
    } else {
      cpuRelax();
    }
    return Status::Ok();
  }

  // After a poll that moved something: the wait (and its bound) starts over.
  void progressed() { polls_ = 0; }

  // Polls made in this wait so far (for work done every so many polls).
  uint64_t polls() const { return polls_; }

 private:
  using Clock = std::chrono::steady_clock;
  static void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }
  static void yieldCore();

  static constexpr double kReportedGapSeconds = 1.0;
  static constexpr double kPeersAfterSeconds = 20e-6;  // a wait reads the peers' word from then on

  WaitPolicy policy_;
  uint64_t polls_ = 0;
  bool yielding_ = false;
  bool expired_ = false;  // the bound passed at the last check: the next check fails
  Clock::time_point start_{}, lastCheck_{};
  double longestGap_ = 0;  // seconds, between two bound checks of this wait
};

// Waits until done() is true: the common case of a Waiter.
template <typename Done, typename What>
Status waitUntil(const WaitPolicy& policy, Done&& done, What&& what) {
  Waiter w(policy);
  while (!done()) STRATA_CHECK(w.idle(what));
  return Status::Ok();
}

}  // namespace strata
