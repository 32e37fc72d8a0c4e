#include "src/core/progress_thread.h"

namespace strata {

void ProgressThread::start(std::function<void()> setUp, std::function<void(uint32_t)> release,
                           const std::atomic<bool>* aborted) {
  release_ = std::move(release);
  aborted_ = aborted;
  thread_ = std::thread(&ProgressThread::loop, this, std::move(setUp));
}

uint32_t ProgressThread::push(Job job) {
  const uint32_t ticket = ++enqueued_;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.emplace_back(ticket, std::move(job));
  }
  cv_.notify_all();
  return ticket;
}

void ProgressThread::loop(std::function<void()> setUp) {
  if (setUp) setUp();
  for (;;) {
    std::pair<uint32_t, Job> item;
    bool skip = false;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      item = std::move(queue_.front());
      queue_.pop_front();
      skip = !error_.ok();
    }
    Status s;
    if (aborted_ != nullptr && aborted_->load()) {
      s = makeStatus(strataInvalidUsage, "the communicator was aborted before this collective ran");
    } else if (!skip) {
      s = item.second.run();
    }
    if (item.second.finish) item.second.finish();
    if (!s.ok()) {
      std::lock_guard<std::mutex> lock(mutex_);
      error_.update(s);
    }
    // Release the caller's stream, whatever happened: a waiting stream must never hang.
    release_(item.first);
    completed_.store(item.first, std::memory_order_release);
  }
}

Status ProgressThread::drain(const WaitPolicy& policy) const {
  // Every wait of a job is bounded by the timeout; allow it that plus a margin.
  WaitPolicy drainPolicy = policy;
  drainPolicy.timeoutSeconds = policy.timeoutSeconds + 10;
  return waitUntil(
      drainPolicy, [&] { return completed_.load(std::memory_order_acquire) == enqueued_; },
      [&] { return strformat("%u queued device collectives", enqueued_ - completed_.load()); });
}

Status ProgressThread::firstError() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

void ProgressThread::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();  // the queue drains first: every ticket is released
}

}  // namespace strata
