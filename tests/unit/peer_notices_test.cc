// The rules of what peers tell each other when a call fails on one of them (src/core/peer_notices.h),
// apart from MPI; the MPI side runs in tests/mpi/negative_test.cc (PeerNotices.*). And the tags
// that keep a failed call's messages from completing the next calls (inter_node/executor.h).
#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <set>
#include <string>

#include "inter_node/executor.h"
#include "src/core/peer_notices.h"

namespace strata {
namespace {

Notice notice(Notice::Kind kind, int rank, uint64_t seq, const char* what) {
  Notice n;
  n.kind = kind;
  n.rank = rank;
  n.seq = seq;
  std::strncpy(n.what, what, sizeof n.what - 1);
  return n;
}

bool says(const Status& s, const std::string& part) { return s.message().find(part) != std::string::npos; }

TEST(NoticeLedger, APeersRefusalOfACallThisRankRunsEndsIt) {
  NoticeLedger ledger(0, 3);
  ledger.started(1);
  ledger.started(2);
  ASSERT_TRUE(ledger.verdict().ok());
  ledger.heard(notice(Notice::kRefused, 2, 2, "strataBroadcast: root 9 is not a rank"));
  EXPECT_EQ(ledger.verdict().code(), strataRemoteError);
  EXPECT_TRUE(says(ledger.verdict(), "rank 2 refused call #2, which this rank makes (strataBroadcast: root 9"))
      << ledger.verdict().message();
}

// A rank whose part did not need the refusing one finished the call: the refusal still ends it (its
// messages of that call may never be received).
TEST(NoticeLedger, ARefusalOfACallThisRankFinishedEndsIt) {
  NoticeLedger ledger(0, 2);
  ledger.started(3);
  ledger.started(4);
  ledger.heard(notice(Notice::kRefused, 1, 3, "x"));
  EXPECT_TRUE(says(ledger.verdict(), "refused call #3")) << ledger.verdict().message();
}

// A refusal of a call this rank has not reached yet waits for it, and ends it when it starts.
TEST(NoticeLedger, ARefusalHeardAheadCountsWhenThatCallStarts) {
  NoticeLedger ledger(1, 2);
  ledger.started(1);
  ledger.heard(notice(Notice::kRefused, 0, 2, "x"));
  EXPECT_TRUE(ledger.verdict().ok()) << "call #2 has not started here";
  ledger.started(2);
  EXPECT_TRUE(says(ledger.verdict(), "rank 0 refused call #2")) << ledger.verdict().message();
}

// Every rank refused the same call: each hears the others' refusals of a call it refused itself,
// before or after its own, and its communicator stays usable; until every peer has said so, the
// next call cannot tell (unanswered).
TEST(NoticeLedger, RefusalsOfACallThisRankRefusedTooAreNoNewsOnceEveryPeerSaidSo) {
  NoticeLedger ledger(1, 4);
  ledger.started(1);
  ledger.heard(notice(Notice::kRefused, 3, 2, "x"));  // before this rank refused it
  ledger.refusedHere(2);
  EXPECT_EQ(ledger.unanswered(), 0);
  ledger.heard(notice(Notice::kRefused, 0, 2, "x"));
  EXPECT_EQ(ledger.unanswered(), 2);
  ledger.heard(notice(Notice::kRefused, 2, 2, "x"));
  EXPECT_EQ(ledger.unanswered(), -1);
  ledger.started(3);
  EXPECT_TRUE(ledger.verdict().ok()) << ledger.verdict().message();
  // An older refusal heard late (this rank refused that call too) is still no news.
  ledger.refusedHere(4);
  ledger.heard(notice(Notice::kRefused, 0, 2, "x"));
  EXPECT_TRUE(ledger.verdict().ok()) << ledger.verdict().message();
  EXPECT_EQ(ledger.unanswered(), 0) << "call #4 is the one the next call waits on";
}

// Refusals in a row: a peer's refusal of the later call does not answer for the earlier one (it
// may have run that one without this rank: a broadcast's root).
TEST(NoticeLedger, EachRefusedCallNeedsItsOwnAnswer) {
  NoticeLedger ledger(1, 2);
  ledger.refusedHere(3);
  ledger.refusedHere(4);
  ledger.heard(notice(Notice::kRefused, 0, 4, "x"));
  uint64_t call = 0;
  EXPECT_EQ(ledger.unanswered(&call), 0);
  EXPECT_EQ(call, 3u);
  ledger.heard(notice(Notice::kRefused, 0, 3, "x"));
  EXPECT_EQ(ledger.unanswered(), -1);
  EXPECT_TRUE(ledger.verdict().ok()) << ledger.verdict().message();
}

// Notices that do not come from a peer (a corrupt rank field) are dropped, not indexed.
TEST(NoticeLedger, ANoticeFromNoPeerIsDropped) {
  NoticeLedger ledger(0, 2);
  ledger.started(1);
  ledger.heard(notice(Notice::kFailed, 7, 1, "x"));
  ledger.heard(notice(Notice::kRefused, -1, 1, "x"));
  ledger.heard(notice(Notice::kRefused, 0, 1, "x"));
  EXPECT_TRUE(ledger.verdict().ok()) << ledger.verdict().message();
}

TEST(NoticeLedger, AFailedPeerEndsEverythingAndTheFirstErrorStays) {
  NoticeLedger ledger(0, 3);
  ledger.refusedHere(1);
  EXPECT_EQ(ledger.unanswered(), 1);
  ledger.heard(notice(Notice::kFailed, 1, 1, "allreduce #1 (ring): timed out"));
  EXPECT_EQ(ledger.verdict().code(), strataRemoteError);
  EXPECT_TRUE(says(ledger.verdict(), "rank 1's communicator failed in call #1 (allreduce #1 (ring): timed out)"))
      << ledger.verdict().message();
  EXPECT_EQ(ledger.unanswered(), -1) << "nothing left to wait for";
  ledger.heard(notice(Notice::kFailed, 2, 1, "later"));
  EXPECT_TRUE(says(ledger.verdict(), "rank 1's")) << ledger.verdict().message();
}

// A failed peer answers for every call this rank refuses afterwards.
TEST(NoticeLedger, AFailedPeerHasAnsweredLaterRefusals) {
  NoticeLedger ledger(0, 2);
  ledger.heard(notice(Notice::kFailed, 1, 1, "x"));
  ledger.refusedHere(2);
  EXPECT_EQ(ledger.unanswered(), -1);
}

TEST(CallTag, APlansTagsStayApartAndTheNextCallsMoveThem) {
  for (int upperBound : {INT_MAX, (1 << 23) - 1, 32767}) {
    std::set<int> one;
    for (int tag = 0; tag < 4096; ++tag) {
      const int t = callTag(tag, 7, upperBound);
      EXPECT_GE(t, 0);
      EXPECT_LE(t, upperBound);
      one.insert(t);
      for (unsigned long long next = 8; next < 7 + kCallsApart; ++next) {
        EXPECT_NE(callTag(tag, next, upperBound), t) << "tag " << tag << ", bound " << upperBound;
      }
    }
    EXPECT_EQ(one.size(), 4096u) << "bound " << upperBound;
  }
  EXPECT_EQ(callTag(5, 3, 0), 5) << "no bound: the plan's tag";
}

}  // namespace
}  // namespace strata
