// ProgressThread: runs a communicator's queued device collectives in order, off the caller's
// thread, and hands each one's ticket to a release callback when it is done, whatever happened: a
// failed or skipped job releases its ticket too, so no stream waits forever (DESIGN.md 5).
//
// After a job fails, the later jobs are skipped (their streams released, their results never
// written): the first error is kept and reported by the communicator's next call.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "kernels/common/bounded_wait.h"
#include "kernels/common/status.h"

namespace strata {

class ProgressThread {
 public:
  struct Job {
    std::function<Status()> run;     // on the progress thread; not called once an earlier job failed
    std::function<void()> finish;    // on the progress thread after run (or instead of it), always
  };

  ProgressThread() = default;
  ProgressThread(const ProgressThread&) = delete;
  ProgressThread& operator=(const ProgressThread&) = delete;
  ~ProgressThread() { stop(); }

  // `setUp` runs first on the thread (cudaSetDevice); `release(ticket)` after each job; `aborted`
  // turns every later job into an error without running it.
  void start(std::function<void()> setUp, std::function<void(uint32_t)> release, const std::atomic<bool>* aborted);
  bool running() const { return thread_.joinable(); }

  // Queues `job` (caller's thread; one caller at a time) and returns its ticket: 1, 2, 3, ...
  uint32_t push(Job job);
  // Waits (bounded, abortable: `policy`, whose timeout is given a margin beyond the jobs' own) until
  // every ticket handed out is released.
  Status drain(const WaitPolicy& policy) const;
  // The first error of a job, or Ok.
  Status firstError() const;
  // Runs what is queued (skipping it when aborted), then joins the thread.
  void stop();

 private:
  void loop(std::function<void()> setUp);

  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::pair<uint32_t, Job>> queue_;  // under mutex_
  bool stop_ = false;                           // under mutex_
  Status error_;                                // under mutex_
  uint32_t enqueued_ = 0;                       // tickets handed out (caller's thread)
  std::atomic<uint32_t> completed_{0};          // tickets released (progress thread)
  std::function<void(uint32_t)> release_;
  const std::atomic<bool>* aborted_ = nullptr;
};

}  // namespace strata
