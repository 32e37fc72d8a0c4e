// The executor's order of ready steps on host buffers.
//
// 1. Every ready message is posted before a local step (copy, reduction) holds the thread, so the
//    message is in flight while the step runs. Rank 0's plan has a copy and a send that are both
//    ready at the start, the copy first in plan order. Its compute backend's copy waits (bounded)
//    for rank 1 to say that the message arrived: it can only arrive if the send was posted before
//    the copy ran.
// 2. While a node op waits for its team, a message that becomes ready is posted: a rank of another
//    lane may need it to reach its own node op (a full-lane alltoall whose sends go round by round
//    deadlocked on 4 nodes of 2 when they were posted only after the op). Rank 0 receives, then
//    sends what depends on the receive, and meanwhile waits in a node op that ends only when rank 1
//    says its plan completed: rank 1's plan completes only if rank 0 sends from inside the op.
// 3. A long host copy runs in pieces, and between them the executor moves its messages: a message
//    that becomes ready while the copy runs is posted then, not after it (a pipelined broadcast's
//    root copying its own buffer held its next block back for the whole copy). Rank 0 receives,
//    then sends what depends on the receive, and meanwhile copies several pieces' worth; its
//    copy's last piece ends only when rank 1 says it received the send.
//
// Run on 2 ranks (more ranks sit out).
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <vector>

#include "inter_node/executor.h"
#include "kernels/plan/plan_builder.h"
#include "tests/mpi/mpi_test_util.h"

namespace strata {
namespace {

constexpr int kAckTag = 7;

// Ranks 0 and 1 of the world: `comm` for the executor, `world` for the test's acknowledgements
// (more ranks sit out: `in` is false for them). Freed on every way out of the test.
struct TwoRanks {
  MPI_Comm comm = MPI_COMM_NULL, world = MPI_COMM_NULL;
  int rank = test::worldRank();
  bool in = rank < 2;
  TwoRanks() {
    MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, rank, &comm);
    MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, rank, &world);
  }
  ~TwoRanks() {
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
    if (world != MPI_COMM_NULL) MPI_Comm_free(&world);
  }
};

// Rank 1 says its plan completed.
void acknowledge(MPI_Comm world) {
  const int ack = 1;
  MPI_Send(&ack, 1, MPI_INT, 0, kAckTag, world);
}

// Rank 0 waits up to `seconds` for rank 1's acknowledgement, calling `meanwhile` between polls;
// false if none came.
bool waitForAck(MPI_Comm world, int seconds, const std::function<void()>& meanwhile = {}) {
  int ack = 0, done = 0;
  MPI_Request req;
  MPI_Irecv(&ack, 1, MPI_INT, 1, kAckTag, world, &req);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!done && std::chrono::steady_clock::now() < deadline) {
    if (meanwhile) meanwhile();
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
  }
  if (!done) {
    MPI_Cancel(&req);
    MPI_Request_free(&req);
  }
  return done != 0;
}

// The host backend, whose copy a test replaces.
class HostBackend : public ComputeBackend {
 public:
  MemorySpace space() const override { return hostComputeBackend().space(); }
  Status reduce(void* dst, const void* const* srcs, int n, size_t count, DataType type, RedOp op) override {
    return hostComputeBackend().reduce(dst, srcs, n, count, type, op);
  }
  Status copy(void* dst, const void* src, size_t bytes) override { return hostComputeBackend().copy(dst, src, bytes); }
  Status divide(void* data, size_t count, DataType type, int divisor) override {
    return hostComputeBackend().divide(data, count, type, divisor);
  }
  Status synchronize() override { return Status::Ok(); }
};

// Every test runs on ranks 0 and 1 (TwoRanks); the others sit out.
class ExecutorOrder : public ::testing::Test {
 protected:
  void SetUp() override {
    if (test::worldSize() < 2) GTEST_SKIP() << "needs two ranks";
    if (!two.in) GTEST_SKIP() << "ranks from 2 on sit out";
  }
  const TwoRanks two;
  const int rank = two.rank;
  const MPI_Comm comm = two.comm, world = two.world;
};

// The host backend, except that a copy first waits for rank 1's acknowledgement on `world`.
class CopyAfterAck : public HostBackend {
 public:
  explicit CopyAfterAck(MPI_Comm world) : world_(world) {}
  Status copy(void* dst, const void* src, size_t bytes) override {
    if (!waitForAck(world_, 20)) {
      return makeStatus(strataInternalError, "the copy ran before the ready send was posted (no acknowledgement in 20 s)");
    }
    acknowledged = true;
    return HostBackend::copy(dst, src, bytes);
  }
  bool acknowledged = false;

 private:
  MPI_Comm world_;
};

TEST_F(ExecutorOrder, ReadyMessagesArePostedBeforeALocalStepRuns) {

  constexpr size_t kCount = 64;  // 256 bytes: an eager message, delivered without the sender's help
  std::vector<float> send(kCount), recv(kCount, 0.0f);
  for (size_t i = 0; i < kCount; ++i) send[i] = static_cast<float>(i) + 0.5f;
  Plan plan;
  PlanBuilder b(&plan);
  const Slice all{BufferId::kSend, 0, kCount}, out{BufferId::kRecv, 0, kCount};
  if (rank == 0) {
    b.copy(out, all);    // first in plan order: an executor that runs ready steps in order runs it first
    b.send(1, all, 0);
  } else {
    b.recv(0, out, 0);
  }
  b.finish();
  ASSERT_EQ(plan.steps[0].depCount + plan.steps.back().depCount, 0u) << "both steps must be ready at the start";

  CopyAfterAck backend(world);
  ExecContext ctx;
  ctx.comm = comm;
  ctx.compute = rank == 0 ? static_cast<ComputeBackend*>(&backend) : &hostComputeBackend();
  ctx.wait.timeoutSeconds = 30;
  Bindings bind;
  bind.send = send.data();
  bind.recv = recv.data();
  Executor exec;
  const Status s = exec.run(plan, bind, ctx);
  if (rank == 1 && s.ok()) acknowledge(world);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(std::memcmp(recv.data(), send.data(), sizeof(float) * kCount), 0);
  if (rank == 0) EXPECT_TRUE(backend.acknowledged);
}

// A node op's team stand-in: its op ends once rank 1 acknowledges, calling the executor's progress
// while it waits, as the node team does (intra_node/node_team.cc). The executor's handling of that
// wait is what is under test, not the node team.
class NodeOpUntilAck : public NodeOpRunner {
 public:
  explicit NodeOpUntilAck(MPI_Comm world) : world_(world) {}
  Status run(const NodeOpCall& call) override {
    if (!waitForAck(world_, 10, [&] {
          if (call.progress != nullptr) call.progress(call.progressContext);
        })) {
      return makeStatus(strataTimeout, "rank 1 did not complete in 10 s: the send that became ready during the node op was not posted");
    }
    return Status::Ok();
  }

 private:
  MPI_Comm world_;
};

TEST_F(ExecutorOrder, AMessageThatBecomesReadyDuringANodeOpIsPosted) {

  constexpr size_t kCount = 64;
  std::vector<float> send(2 * kCount), recv(2 * kCount, 0.0f);
  for (size_t i = 0; i < send.size(); ++i) send[i] = static_cast<float>(i + 1000 * rank);
  Plan plan;
  PlanBuilder b(&plan);
  const Slice first{BufferId::kSend, 0, kCount}, firstOut{BufferId::kRecv, 0, kCount};
  const Slice second{BufferId::kSend, kCount, kCount}, secondOut{BufferId::kRecv, kCount, kCount};
  if (rank == 0) {
    const StepId got = b.recv(1, firstOut, 0);
    b.send(1, second, 1, {got});  // ready only once the receive completed, inside the node op
    NodeOpDesc op;
    op.members = {0};
    b.nodeOp(std::move(op));
  } else {
    b.send(0, first, 0);
    b.recv(0, secondOut, 1);
  }
  b.finish();

  NodeOpUntilAck team(world);
  ExecContext ctx;
  ctx.comm = comm;
  ctx.compute = &hostComputeBackend();
  ctx.nodeOps = &team;
  ctx.wait.timeoutSeconds = 15;
  Bindings bind;
  bind.send = send.data();
  bind.recv = recv.data();
  Executor exec;
  const Status s = exec.run(plan, bind, ctx);
  if (rank == 1 && s.ok()) acknowledge(world);
  EXPECT_TRUE(s.ok()) << s.message();
  // Each rank received the other's piece: rank 1's first, rank 0's second.
  const size_t got = rank == 0 ? 0 : kCount;
  for (size_t i = got; i < got + kCount; ++i) {
    ASSERT_EQ(recv[i], static_cast<float>(i + 1000 * (1 - rank))) << "element " << i;
  }
}

// The host backend, except that a copy's first piece waits for rank 1's word that its message is
// on its way (kSentTag), and the piece that ends at `end` for rank 1's acknowledgement that its
// plan completed.
constexpr int kSentTag = 8;
class CopyUntilAck : public HostBackend {
 public:
  CopyUntilAck(MPI_Comm world, const char* end) : world_(world), end_(end) {}
  Status copy(void* dst, const void* src, size_t bytes) override {
    if (pieces++ == 0) {
      int sent = 0;
      MPI_Recv(&sent, 1, MPI_INT, 1, kSentTag, world_, MPI_STATUS_IGNORE);
    }
    if (static_cast<char*>(dst) + bytes == end_ && !waitForAck(world_, 20)) {
      return makeStatus(strataTimeout, "rank 1 did not complete in 20 s: the send that became ready while the copy ran "
                                       "was not posted between its pieces");
    }
    return HostBackend::copy(dst, src, bytes);
  }
  int pieces = 0;

 private:
  MPI_Comm world_;
  const char* end_;
};

TEST_F(ExecutorOrder, AMessageThatBecomesReadyDuringALongCopyIsPosted) {

  constexpr size_t kCount = 64;  // the messages: 256 bytes, eager
  const size_t copyCount = 8 * Executor::kProgressBytes / sizeof(float);  // eight pieces
  std::vector<float> send(copyCount + 2 * kCount), recv(copyCount + 2 * kCount, 0.0f);
  for (size_t i = 0; i < send.size(); ++i) send[i] = static_cast<float>(i % 100000 + 1000 * rank);
  const Slice first{BufferId::kSend, 0, kCount}, firstOut{BufferId::kRecv, 0, kCount};
  const Slice second{BufferId::kSend, kCount, kCount}, secondOut{BufferId::kRecv, kCount, kCount};
  const Slice copied{BufferId::kSend, 2 * kCount, copyCount}, copiedOut{BufferId::kRecv, 2 * kCount, copyCount};
  ExecContext ctx;
  ctx.comm = comm;
  ctx.wait.timeoutSeconds = 30;
  if (rank == 1) {
    // Its first message leaves before rank 0's copy starts (eager: it needs no help from rank 0),
    // with the plan's tag for it (call 0's, as the executor moves it), and then its word on `world`.
    MPI_Send(send.data(), kCount, MPI_FLOAT, 0, callTag(0, ctx.seq, ctx.tagUpperBound), comm);
    const int sent = 1;
    MPI_Send(&sent, 1, MPI_INT, 0, kSentTag, world);
  }
  Plan plan;
  PlanBuilder b(&plan);
  if (rank == 0) {
    b.copy(copiedOut, copied);  // ready at the start, run after the receive is posted
    const StepId got = b.recv(1, firstOut, 0);
    b.send(1, second, 1, {got});  // ready once the receive completed: while the copy runs
  } else {
    b.recv(0, secondOut, 1);
  }
  b.finish();

  Bindings bind;
  bind.send = send.data();
  bind.recv = recv.data();
  CopyUntilAck backend(world, reinterpret_cast<const char*>(recv.data() + 2 * kCount + copyCount));
  ctx.compute = rank == 0 ? static_cast<ComputeBackend*>(&backend) : &hostComputeBackend();
  Executor exec;
  const Status s = exec.run(plan, bind, ctx);
  if (rank == 1 && s.ok()) acknowledge(world);
  EXPECT_TRUE(s.ok()) << s.message();
  if (rank == 0) {
    EXPECT_EQ(backend.pieces, 8) << "the copy runs in pieces of Executor::kProgressBytes";
    for (size_t i = 0; i < kCount; ++i) ASSERT_EQ(recv[i], send[i] + 1000) << "element " << i << " from rank 1";
    EXPECT_EQ(std::memcmp(recv.data() + 2 * kCount, send.data() + 2 * kCount, copyCount * sizeof(float)), 0);
  } else {
    for (size_t i = kCount; i < 2 * kCount; ++i) ASSERT_EQ(recv[i], send[i] - 1000) << "element " << i << " from rank 0";
  }
}

}  // namespace
}  // namespace strata
