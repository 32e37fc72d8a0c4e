// The node team over real processes (fork, no MPI): node ops give the right data, the shared
// segments never stay in /dev/shm, the data segment grows on demand, and when a member is killed
// the survivors' waits end with a timeout that names the node op, the round and the member.
#include <gtest/gtest.h>
#include <dirent.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "intra_node/node_collectives.h"
#include "intra_node/node_op_layout.h"
#include "intra_node/node_team.h"

namespace strata {
namespace {

// A bootstrap over memory shared before fork: a name slot and a generation-counted barrier.
struct Mailbox {
  std::atomic<int> arrived[64];
  std::atomic<int> failed[64];
  std::atomic<int> pids[64];
  char name[128];
};

class ForkBootstrap final : public NodeBootstrap {
 public:
  ForkBootstrap(Mailbox* box, int members, int me) : box_(box), members_(members), me_(me) {}
  Status broadcastName(std::string* name) override {
    if (me_ == 0) std::snprintf(box_->name, sizeof(box_->name), "%s", name->c_str());
    bool ignored;
    STRATA_CHECK(agree(true, &ignored));
    *name = box_->name;
    return Status::Ok();
  }
  Status agree(bool ok, bool* allOk) override {
    const int g = gen_++;
    if (!ok) box_->failed[g].fetch_add(1);
    box_->arrived[g].fetch_add(1);
    for (int i = 0; box_->arrived[g].load() < members_; ++i) {
      if (i > 20000000) return makeStatus(strataTimeout, "fork bootstrap barrier");
      sched_yield();
    }
    *allOk = box_->failed[g].load() == 0;
    return Status::Ok();
  }

 private:
  Mailbox* box_;
  int members_, me_;
  int gen_ = 0;
};

// Segments in /dev/shm created by the given processes (their names carry the creator's pid), so
// other Strata jobs on the machine do not count.
int leftoverSegments(const std::vector<int>& pids) {
  int count = 0;
  if (DIR* d = opendir("/dev/shm")) {
    while (dirent* e = readdir(d)) {
      if (std::strncmp(e->d_name, "strata-", 7) != 0) continue;
      for (int pid : pids) {
        if (pid > 0 && std::strstr(e->d_name, ("-" + std::to_string(pid) + "-").c_str())) ++count;
      }
    }
    closedir(d);
  }
  return count;
}
std::vector<int> teamPids(const Mailbox* box, int members) {
  std::vector<int> pids;
  for (int i = 0; i < members; ++i) pids.push_back(box->pids[i].load());
  return pids;
}
std::vector<int> lastTeam;  // pids of the last team run, for checks after it ended

// Runs body(team, me) in `members` processes; returns each child's exit status (0 = passed).
std::vector<int> runTeam(int members, const std::function<int(NodeTeam&, int)>& body, NodeTeamOptions options = {}) {
  auto* box = static_cast<Mailbox*>(mmap(nullptr, sizeof(Mailbox), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  new (box) Mailbox();
  std::vector<pid_t> pids;
  for (int me = 0; me < members; ++me) {
    const pid_t pid = fork();
    if (pid == 0) {
      box->pids[me].store(static_cast<int>(getpid()));
      ForkBootstrap boot(box, members, me);
      std::unique_ptr<NodeTeam> team;
      Status s = NodeTeam::create(members, me, boot, options, &team);
      if (!s.ok()) {
        std::fprintf(stderr, "member %d: %s\n", me, s.message().c_str());
        _exit(90);
      }
      // Mapped and unlinked: nothing of ours remains under /dev/shm (checked while nobody can be
      // creating a segment: between two barriers).
      bool all = false;
      if (!boot.agree(true, &all).ok()) _exit(92);
      const bool clean = leftoverSegments(teamPids(box, members)) == 0;
      if (!boot.agree(clean, &all).ok() || !all) _exit(91);
      _exit(body(*team, me));
    }
    pids.push_back(pid);
  }
  std::vector<int> status;
  for (pid_t pid : pids) {
    int st = 0;
    waitpid(pid, &st, 0);
    status.push_back(WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st));
  }
  lastTeam = teamPids(box, members);
  munmap(box, sizeof(Mailbox));
  return status;
}

NodeOpCall callFor(const NodeOpDesc& d, float* send, float* recv, double seconds = 10) {
  NodeOpCall c;
  c.desc = &d;
  c.bases[0] = reinterpret_cast<char*>(send);
  c.bases[1] = reinterpret_cast<char*>(recv);
  c.type = strataFloat32;
  c.op = strataSum;
  c.wait.timeoutSeconds = seconds;
  return c;
}

Group teamGroup(int members, int me) { return Group::world(members, me); }

TEST(NodeTeam, NodeOpsMoveTheRightData) {
  const int n = 4;
  const std::vector<int> st = runTeam(n, [&](NodeTeam& team, int me) {
    const size_t count = 100003;  // several rounds, odd sizes
    std::vector<float> send(count * n), recv(count * n, -1.0f);
    for (size_t i = 0; i < send.size(); ++i) send[i] = static_cast<float>((i * 7 + static_cast<size_t>(me) * 13) % 11);
    const Group g = teamGroup(n, me);
    const Slice in{BufferId::kSend, 0, count}, out{BufferId::kRecv, 0, count};
    auto input = [&](int rank, size_t i) { return static_cast<float>((i * 7 + static_cast<size_t>(rank) * 13) % 11); };
    // one-shot allreduce
    NodeOpDesc d = nodeAllReduce(g, in, out);
    if (!team.run(callFor(d, send.data(), recv.data())).ok()) return 1;
    for (size_t i = 0; i < count; ++i) {
      float want = 0;
      for (int r = 0; r < n; ++r) want += input(r, i);
      if (recv[i] != want) return 2;
    }
    // reduce-scatter of 4 blocks, then allgather them back
    const BlockLayout blocks = BlockLayout::even(count, n);
    std::vector<Slice> inBlocks, outBlocks;
    for (int k = 0; k < n; ++k) {
      inBlocks.push_back(in.sub(blocks.offset[static_cast<size_t>(k)], blocks.count[static_cast<size_t>(k)]));
      outBlocks.push_back(out.sub(blocks.offset[static_cast<size_t>(k)], blocks.count[static_cast<size_t>(k)]));
    }
    std::fill(recv.begin(), recv.end(), -1.0f);
    d = nodeReduceScatter(g, inBlocks, outBlocks[static_cast<size_t>(me)]);
    if (!team.run(callFor(d, send.data(), recv.data())).ok()) return 3;
    std::vector<std::vector<Slice>> pieces;
    for (const Slice& s : outBlocks) pieces.push_back({s});
    d = nodeAllGather(g, pieces);
    if (!team.run(callFor(d, send.data(), recv.data())).ok()) return 4;
    for (size_t i = 0; i < count; ++i) {
      float want = 0;
      for (int r = 0; r < n; ++r) want += input(r, i);
      if (recv[i] != want) return 5;
    }
    // alltoall: block k of my send goes to member k
    const Slice all{BufferId::kSend, 0, count * n}, allOut{BufferId::kRecv, 0, count * n};
    std::vector<Slice> a2aIn, a2aOut;
    for (int k = 0; k < n; ++k) {
      a2aIn.push_back(all.sub(static_cast<size_t>(k) * count, count));
      a2aOut.push_back(allOut.sub(static_cast<size_t>(k) * count, count));
    }
    d = nodeAllToAll(g, a2aIn, a2aOut);
    if (!team.run(callFor(d, send.data(), recv.data())).ok()) return 6;
    for (int k = 0; k < n; ++k) {
      for (size_t i = 0; i < count; i += 997) {
        if (recv[static_cast<size_t>(k) * count + i] != input(k, static_cast<size_t>(me) * count + i)) return 7;
      }
    }
    // exclusive scan in member order
    d = nodeScan(g, in, out, true);
    std::fill(recv.begin(), recv.end(), -1.0f);
    if (!team.run(callFor(d, send.data(), recv.data())).ok()) return 8;
    for (size_t i = 0; i < count; i += 101) {
      float want = 0;
      for (int r = 0; r < me; ++r) want += input(r, i);
      if (me == 0 ? recv[i] != -1.0f : recv[i] != want) return 9;
    }
    return 0;
  });
  for (int k = 0; k < n; ++k) EXPECT_EQ(st[static_cast<size_t>(k)], 0) << "member " << k;
  EXPECT_EQ(leftoverSegments(lastTeam), 0);
}

TEST(NodeTeam, GrowsTheDataSegmentOnDemand) {
  NodeTeamOptions small;
  small.initialSlotBytes = 4096;
  small.maxSlotBytes = size_t{1} << 20;
  const std::vector<int> st = runTeam(3, [&](NodeTeam& team, int me) {
    const size_t before = team.slotBytes();
    const size_t count = 300000;
    std::vector<float> send(count, static_cast<float>(me + 1)), recv(count, 0.0f);
    NodeOpDesc d = nodeAllReduce(teamGroup(3, me), Slice{BufferId::kSend, 0, count}, Slice{BufferId::kRecv, 0, count});
    if (!team.run(callFor(d, send.data(), recv.data())).ok()) return 1;
    if (team.slotBytes() <= before) return 2;
    for (float v : recv) {
      if (v != 6.0f) return 3;
    }
    return 0;
  }, small);
  for (int v : st) EXPECT_EQ(v, 0);
  EXPECT_EQ(leftoverSegments(lastTeam), 0);
}

TEST(NodeTeam, AKilledMemberLeavesNothingAndTheOthersTimeOutNamingIt) {
  auto* report = static_cast<char*>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  const std::vector<int> st = runTeam(3, [&](NodeTeam& team, int me) {
    if (me == 2) raise(SIGKILL);  // dies holding its mapping
    std::vector<float> send(1000, 1.0f), recv(1000, 0.0f);
    NodeOpDesc d = nodeAllReduce(teamGroup(3, me), Slice{BufferId::kSend, 0, 1000}, Slice{BufferId::kRecv, 0, 1000});
    Status s = team.run(callFor(d, send.data(), recv.data(), 1.0));
    if (s.code() != strataTimeout) return 1;
    if (me == 0) std::snprintf(report, 4096, "%s", s.message().c_str());
    return 0;
  });
  EXPECT_EQ(st[0], 0);
  EXPECT_EQ(st[1], 0);
  EXPECT_EQ(st[2], 100 + SIGKILL);
  const std::string msg(report);
  EXPECT_NE(msg.find("node-allreduce"), std::string::npos) << msg;
  EXPECT_NE(msg.find("round 1 of 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("node member 2"), std::string::npos) << msg;
  EXPECT_EQ(leftoverSegments(lastTeam), 0) << "a killed member must leave nothing in /dev/shm";
  munmap(report, 4096);
}

// A member that aborted leaves without meeting the others again (strataCommAbort): the barrier the
// others hold (a teardown's) ends at once, naming it, instead of at its deadline with a timeout,
// and so does every barrier after it.
TEST(NodeTeam, ABarrierEndsAtOnceWhenAMemberAborted) {
  const std::vector<int> st = runTeam(3, [&](NodeTeam& team, int me) {
    const auto minute = [] { return std::chrono::steady_clock::now() + std::chrono::seconds(60); };
    if (!team.barrier(minute(), "before").ok()) return 1;  // every member there once
    if (me == 2) {
      team.markGone();
      return 0;
    }
    // At its deadline it would end with strataTimeout instead. The next barrier fails too: this
    // member's count and sense no longer match the team's (it would pass alone).
    for (int k = 0; k < 2; ++k) {
      const Status s = team.barrier(minute(), "teardown");
      if (s.code() != strataRemoteError || s.message().find("node member 2 aborted") == std::string::npos) return 2 + k;
    }
    return 0;
  });
  for (int k = 0; k < 3; ++k) EXPECT_EQ(st[static_cast<size_t>(k)], 0) << "member " << k;
}

// A broadcast's root only writes: the op is over for it once its pieces are in its slot, and what
// its kind of store costs shows in its reader's time. The root's figures for both kinds must be
// the team's time from the last start, here at least 30 ms: the root starts 50 ms after the reader,
// which, waiting for it, is held 100 ms (in the progress it drives while it waits); the root's own
// part takes microseconds. (The margins are wide: a busy machine may hold the reader back too.)
TEST(NodeTeam, TheStoreChoiceTimesARunUntilEveryMemberHasReadIt) {
  const std::vector<int> st = runTeam(2, [&](NodeTeam& team, int me) {
    const size_t count = 16384;  // 64 KiB: one round of large pieces
    std::vector<float> send(count, static_cast<float>(me + 1)), recv(count, -1.0f);
    const Slice in{BufferId::kSend, 0, count}, out{BufferId::kRecv, 0, count};
    const NodeOpDesc d = nodeBroadcast(teamGroup(2, me), 0, in, out);
    bool held = false;
    NodeOpCall call = callFor(d, send.data(), recv.data());
    if (me == 1) {
      call.wait.spinSeconds = 1;  // polls without yielding, so the progress comes within microseconds
      call.progressContext = &held;
      call.progress = [](void* heldFlag) {
        bool& h = *static_cast<bool*>(heldFlag);
        if (!h) usleep(100000);
        h = true;
      };
    }
    const auto soon = [] { return std::chrono::steady_clock::now() + std::chrono::seconds(10); };
    for (int run = 0; run < 4; ++run) {
      held = false;
      if (!team.barrier(soon(), "test").ok()) return 3;  // the reader is there first
      if (me == 0) usleep(50000);
      if (!team.run(call).ok()) return 1;
      if (me == 1 && (recv[count - 1] != 1.0f || !held)) return 2;
    }
    // Every member has read all four runs once both pass the barrier; the fifth run settles them.
    if (!team.barrier(soon(), "test").ok()) return 3;
    held = true;
    if (!team.run(call).ok()) return 4;
    if (me != 0) return 0;  // the reader stores nothing into its slot: it has no choice to make
    const auto* layout = static_cast<const NodeOpLayout*>(d.runnerState.get());
    if (layout == nullptr || !layout->largePieces) return 5;
    const StoreChoice& c = layout->stores;
    if (!c.tried[0] || !c.tried[1]) return 6;
    std::fprintf(stderr, "root's figures: plain %.1f ms, streaming %.1f ms\n", c.seconds[0] * 1e3, c.seconds[1] * 1e3);
    return c.seconds[0] >= 0.03 && c.seconds[1] >= 0.03 ? 0 : 7;
  });
  for (int k = 0; k < 2; ++k) EXPECT_EQ(st[static_cast<size_t>(k)], 0) << "member " << k;
}

// Every member figures a run from the same published times (the last start to the last end), so
// members that have recorded the same runs hold the same figures and choose alike. Here a barrier
// before each run lets every member record every earlier run first (without it a member may choose
// before the last run's times are all in, and the members' kinds part for a while).
TEST(NodeTeam, TheMembersOfAnOpHoldTheSameStoreFigures) {
  const int n = 3;
  const std::vector<int> st = runTeam(n, [&](NodeTeam& team, int me) {
    const size_t count = 16384;  // per member: 64 KiB, large pieces
    std::vector<float> send(count * n, 0.0f), recv(count * n, -1.0f);  // in place: my piece is in recv
    std::fill(recv.begin() + me * count, recv.begin() + (me + 1) * count, static_cast<float>(me + 1));
    const Slice out{BufferId::kRecv, 0, count * n};
    std::vector<std::vector<Slice>> pieces;
    for (int k = 0; k < n; ++k) pieces.push_back({out.sub(static_cast<size_t>(k) * count, count)});
    const NodeOpDesc d = nodeAllGather(teamGroup(n, me), pieces);
    const NodeOpCall call = callFor(d, send.data(), recv.data());
    const auto soon = [] { return std::chrono::steady_clock::now() + std::chrono::seconds(10); };
    for (int run = 0; run < 7; ++run) {  // the seventh settles the sixth
      if (!team.barrier(soon(), "test").ok()) return 2;
      if (!team.run(call).ok()) return 1;
    }
    for (size_t i = 0; i < recv.size(); ++i) {
      if (recv[i] != static_cast<float>(i / count + 1)) return 3;  // member k's piece holds k + 1
    }
    const auto* layout = static_cast<const NodeOpLayout*>(d.runnerState.get());
    if (layout == nullptr || !layout->largePieces || !layout->stores.tried[0] || !layout->stores.tried[1]) return 4;
    double mine[2] = {layout->stores.seconds[0], layout->stores.seconds[1]}, all[n][2];
    if (!(mine[0] > 0 && mine[1] > 0)) return 7;
    if (!team.exchange(mine, sizeof(mine), all, 10).ok()) return 5;
    for (int k = 0; k < n; ++k) {
      if (all[k][0] != mine[0] || all[k][1] != mine[1]) {
        std::fprintf(stderr, "member %d: plain %.3f us, streaming %.3f us; member %d: %.3f, %.3f\n", me, mine[0] * 1e6,
                     mine[1] * 1e6, k, all[k][0] * 1e6, all[k][1] * 1e6);
        return 6;
      }
    }
    return 0;
  });
  for (int k = 0; k < n; ++k) EXPECT_EQ(st[static_cast<size_t>(k)], 0) << "member " << k;
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

// Runs the choice against a machine where plain stores take `plain` seconds and streaming stores
// `streaming`, except the first `coldRuns` runs, which take `cold`; returns the kinds of runs
// from..to (true: streaming).
std::vector<bool> storeRuns(double plain, double streaming, int coldRuns, double cold, int from, int to) {
  StoreChoice c;
  std::vector<bool> kinds;
  for (int r = 0; r < to; ++r) {
    const bool s = c.next();
    c.record(s, r < coldRuns ? cold : s ? streaming : plain);
    if (r >= from) kinds.push_back(s);
  }
  return kinds;
}

// The runs (0-based) of kind `stream` among `kinds`.
std::vector<int> runsOf(const std::vector<bool>& kinds, bool stream) {
  std::vector<int> at;
  for (size_t r = 0; r < kinds.size(); ++r) {
    if (kinds[r] == stream) at.push_back(static_cast<int>(r));
  }
  return at;
}

TEST(StoreChoice, TriesBothKindsThenKeepsTheFasterRetryingTheOther) {
  const std::vector<bool> first = storeRuns(1e-5, 2e-5, 0, 0, 0, 4);
  EXPECT_EQ(first, (std::vector<bool>{false, true, false, true}));
  // Streaming, 2x slower, is clearly slower at each try: its retries come twice as rare each time
  // (16, 32, 64 runs apart from run 2, when both kinds first had a time), then every 64th run.
  EXPECT_EQ(runsOf(storeRuns(1e-5, 2e-5, 0, 0, 0, 200), true), (std::vector<int>{1, 3, 18, 50, 114, 178}));
  EXPECT_EQ(runsOf(storeRuns(3e-5, 2e-5, 0, 0, 0, 200), false), (std::vector<int>{0, 2, 18, 50, 114, 178}))
      << "and plain alike when streaming is faster";
}

TEST(StoreChoice, RetriesAKindWithinAQuarterEveryEighthRun) {
  // 1.18x apart: either may become the faster as the machine drifts, so the slower keeps its retries.
  EXPECT_EQ(runsOf(storeRuns(1.7e-5, 2e-5, 0, 0, 0, 60), true), (std::vector<int>{1, 3, 10, 18, 26, 34, 42, 50, 58}));
}

TEST(StoreChoice, ARetryThatWinsBringsTheRetriesBackToEveryEighthRun) {
  // Plain 2x faster for 100 runs, then 4x slower: once its figure is past streaming's, streaming
  // runs, and plain, the slower now, is retried 8 runs later, then 16 and 32 as it stays slower.
  StoreChoice c;
  std::vector<bool> kinds;
  for (int r = 0; r < 200; ++r) {
    const bool s = c.next();
    c.record(s, r < 100 ? (s ? 2e-5 : 1e-5) : (s ? 1e-5 : 4e-5));
    kinds.push_back(s);
  }
  std::vector<int> plainAfter;
  for (int r = 101; r < 200; ++r) {
    if (!kinds[static_cast<size_t>(r)]) plainAfter.push_back(r);
  }
  EXPECT_FALSE(kinds[100]) << "run 100, the first slow plain run, averaged into plain's figure";
  EXPECT_EQ(plainAfter, (std::vector<int>{109, 125, 157}));
}

TEST(StoreChoice, AlternatesUntilBothKindsHaveATime) {
  // Team times come in a few runs late (NodeTeam::run): until both kinds have one, neither is kept.
  StoreChoice c;
  std::vector<bool> kinds;
  for (int r = 0; r < 8; ++r) kinds.push_back(c.next());
  EXPECT_EQ(kinds, (std::vector<bool>{false, true, false, true, false, true, false, true}));
  c.record(false, 1e-5);
  EXPECT_FALSE(c.next());  // run 8: plain's time alone, so plain again (r % 2 == 0)
  EXPECT_TRUE(c.next());   // and streaming, still without a time
  c.record(true, 2e-5);
  EXPECT_FALSE(c.next());  // both known: plain, the faster
}

TEST(StoreChoice, ColdFirstRunsDoNotLockInTheSlowerKind) {
  // The first two runs (a plain and a streaming try) pay the op's first touch, 10x the warm time:
  // the second try of each kind is warm, and plain (the faster) runs from the fifth run on.
  const std::vector<bool> kinds = storeRuns(1.7e-5, 2.5e-5, 2, 1.7e-4, 4, 18);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), true), 0) << "streaming, 1.47x slower, first retried at run 18";
  // Three cold runs (both plain tries cold): streaming runs first, plain's first retry (run 12)
  // wins it back, and from then on streaming only retries (runs 21 and 37).
  const std::vector<bool> recovered = storeRuns(1.7e-5, 2.5e-5, 3, 1.7e-4, 0, 40);
  EXPECT_EQ(runsOf(recovered, true), (std::vector<int>{1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 21, 37}));
}

}  // namespace
}  // namespace strata
