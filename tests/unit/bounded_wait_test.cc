// The library's one wait (kernels/common/bounded_wait.h): bounded, abortable, and its timeout says
// what it waited for, and whether the waiting thread itself was held away from its polls.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "kernels/common/bounded_wait.h"

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

TEST(BoundedWait, ANeverDoneWaitTimesOutNamingWhatItWaitedFor) {
  WaitPolicy policy;
  policy.timeoutSeconds = 0.05;
  const auto start = Clock::now();
  const Status s = waitUntil(policy, [] { return false; }, [] { return std::string("the answer"); });
  EXPECT_EQ(s.code(), strataTimeout);
  EXPECT_NE(s.message().find("timed out after"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("waiting for the answer"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find("between two of its polls"), std::string::npos) << "it polled all along: " << s.message();
  EXPECT_GE(secondsSince(start), 0.05);
  EXPECT_LT(secondsSince(start), 5.0);
}

// A thread held away from its polls (blocked in a call, or stopped) longer than the bound times out
// once it has polled again after the bound, and says it was away: its peers' timeouts then point at it.
TEST(BoundedWait, ATimeoutAfterTheThreadWasAwaySaysSo) {
  WaitPolicy policy;
  policy.timeoutSeconds = 0.5;
  Waiter w(policy);
  Status s;
  for (int poll = 0; s.ok() && poll < 100000; ++poll) {
    if (poll == 20) std::this_thread::sleep_for(std::chrono::milliseconds(1300));
    s = w.idle([] { return std::string("a peer"); });
  }
  ASSERT_EQ(s.code(), strataTimeout) << s.message();
  // The gap it reports is at least the time it was away (a loaded machine may add to it).
  const size_t at = s.message().find("went ");
  ASSERT_NE(at, std::string::npos) << s.message();
  EXPECT_GE(std::stod(s.message().substr(at + 5)), 1.25) << s.message();
  EXPECT_NE(s.message().find("between two of its polls"), std::string::npos) << s.message();
}

// A thread away past the bound whose condition came true meanwhile: the check that finds the
// bound passed is followed by polls before the wait fails, so the wait ends well, and a timeout
// never reports the state seen before the thread was away.
TEST(BoundedWait, AConditionThatCameTrueWhileTheThreadWasAwayEndsTheWaitWell) {
  WaitPolicy policy;
  policy.timeoutSeconds = 0.2;
  Waiter w(policy);
  bool done = false;  // what the wait polls
  Status s;
  for (int idles = 1; s.ok() && !done; ++idles) {
    // The poll found nothing. Before the 16th idle(), the one that checks the bound, the thread is
    // away past the bound, and the condition comes true meanwhile (a peer's message arrived).
    if (idles == 16) {
      std::this_thread::sleep_for(std::chrono::milliseconds(400));
      done = true;
    }
    s = w.idle([] { return std::string("a peer"); });
  }
  EXPECT_TRUE(s.ok()) << "timed out on the state seen before it was away: " << s.message();
  EXPECT_TRUE(done);
}

TEST(BoundedWait, ProgressRestartsTheBound) {
  WaitPolicy policy;
  policy.timeoutSeconds = 0.2;
  Waiter w(policy);
  const auto start = Clock::now();
  while (secondsSince(start) < 0.6) {
    for (int k = 0; k < 64; ++k) ASSERT_TRUE(w.idle([] { return std::string("x"); }).ok());
    w.progressed();
  }
}

TEST(BoundedWait, AnAbortEndsTheWait) {
  std::atomic<bool> aborted{true};
  WaitPolicy policy;
  policy.timeoutSeconds = 60;
  policy.abortFlag = &aborted;
  const Status s = waitUntil(policy, [] { return false; }, [] { return std::string("the barrier"); });
  EXPECT_EQ(s.code(), strataInvalidUsage);
  EXPECT_NE(s.message().find("aborted"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("the barrier"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace strata
