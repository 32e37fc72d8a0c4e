// Bad input gets a clear code and message, never a crash, a hang or a partial write; every wait
// is bounded and its timeout names what it waited for.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tests/mpi/mpi_test_util.h"

namespace strata::test {
namespace {

bool contains(const char* text, const std::string& part) { return text != nullptr && std::string(text).find(part) != std::string::npos; }

// A communicator of one node (the node team serves one-shot) bounded at 60 s, with `algorithm`
// forced, on which every rank made one allreduce of `x` into `y`: every rank built and agreed on the
// plan, so a later call that some ranks do not make waits in its messages. Null where that failed
// (the failure recorded on this rank).
strataComm_t agreedOneNodeComm(const char* algorithm, std::vector<float>& x, std::vector<float>& y) {
  strataConfig_t config = STRATA_CONFIG_INITIALIZER;
  config.timeoutSeconds = 60;
  config.algorithm = algorithm;
  config.ranksPerNode = worldSize();
  strataComm_t c = nullptr;
  if (strataCommInitMpi(&c, MPI_COMM_WORLD, &config) != strataSuccess) {
    ADD_FAILURE() << algorithm << ": " << strataGetLastError(nullptr);
    return nullptr;
  }
  if (strataAllReduce(x.data(), y.data(), x.size(), strataFloat32, strataSum, c, nullptr) != strataSuccess) {
    ADD_FAILURE() << algorithm << ": " << strataGetLastError(c);
    return nullptr;
  }
  return c;
}

class Negative : public ::testing::Test {
 protected:
  void SetUp() override {
    comm_ = commFor("0", "");
    ASSERT_NE(comm_, nullptr);
    recv_.assign(64, 0x77);
    send_.assign(64, 0x11);
  }
  bool recvUntouched() const {
    for (unsigned char b : recv_) {
      if (b != 0x77) return false;
    }
    return true;
  }
  strataComm_t comm_ = nullptr;
  std::vector<unsigned char> send_, recv_;
};

TEST_F(Negative, NullBufferWithCount) {
  EXPECT_EQ(strataAllReduce(nullptr, recv_.data(), 4, strataFloat32, strataSum, comm_, nullptr), strataInvalidArgument);
  EXPECT_TRUE(contains(strataGetLastError(comm_), "sendbuff is NULL")) << strataGetLastError(comm_);
  EXPECT_TRUE(contains(strataGetLastError(comm_), "strataAllReduce"));
  EXPECT_EQ(strataAllGather(send_.data(), nullptr, 1, strataFloat32, comm_, nullptr), strataInvalidArgument);
  EXPECT_TRUE(contains(strataGetLastError(comm_), "recvbuff is NULL")) << strataGetLastError(comm_);
  EXPECT_TRUE(recvUntouched());
}

TEST_F(Negative, BadDatatypeOpAndRoot) {
  EXPECT_EQ(strataAllReduce(send_.data(), recv_.data(), 4, static_cast<strataDataType_t>(42), strataSum, comm_, nullptr),
            strataInvalidArgument);
  EXPECT_TRUE(contains(strataGetLastError(comm_), "invalid datatype 42")) << strataGetLastError(comm_);
  EXPECT_EQ(strataAllReduce(send_.data(), recv_.data(), 4, strataFloat32, static_cast<strataRedOp_t>(9), comm_, nullptr),
            strataInvalidArgument);
  EXPECT_TRUE(contains(strataGetLastError(comm_), "invalid reduction op 9")) << strataGetLastError(comm_);
  EXPECT_EQ(strataBroadcast(send_.data(), recv_.data(), 4, strataFloat32, worldSize(), comm_, nullptr),
            strataInvalidArgument);
  EXPECT_TRUE(contains(strataGetLastError(comm_), "root")) << strataGetLastError(comm_);
  EXPECT_EQ(strataReduce(send_.data(), recv_.data(), 4, strataFloat32, strataSum, -1, comm_, nullptr),
            strataInvalidArgument);
  EXPECT_TRUE(recvUntouched());
}

TEST_F(Negative, CountTimesSizeOverflows) {
  EXPECT_EQ(strataAllReduce(send_.data(), recv_.data(), SIZE_MAX / 2, strataFloat64, strataSum, comm_, nullptr),
            strataInvalidArgument);
  EXPECT_TRUE(contains(strataGetLastError(comm_), "overflow")) << strataGetLastError(comm_);
  // count x 8 bytes overflows whatever the number of ranks
  EXPECT_EQ(strataAllGather(send_.data(), recv_.data(), SIZE_MAX / 4, strataInt64, comm_, nullptr),
            strataInvalidArgument);
  EXPECT_TRUE(contains(strataGetLastError(comm_), "overflow")) << strataGetLastError(comm_);
  EXPECT_TRUE(recvUntouched());
}

TEST_F(Negative, OverlappingBuffersThatAreNotInPlace) {
  EXPECT_EQ(strataAllReduce(recv_.data() + 4, recv_.data(), 8, strataUint8, strataSum, comm_, nullptr),
            strataInvalidArgument);
  EXPECT_TRUE(contains(strataGetLastError(comm_), "overlap")) << strataGetLastError(comm_);
  EXPECT_TRUE(recvUntouched());
}

TEST_F(Negative, NullAndDestroyedCommunicators) {
  EXPECT_EQ(strataAllReduce(send_.data(), recv_.data(), 4, strataFloat32, strataSum, nullptr, nullptr),
            strataInvalidArgument);
  EXPECT_TRUE(contains(strataGetLastError(nullptr), "comm is NULL")) << strataGetLastError(nullptr);
  strataComm_t c = nullptr;
  ASSERT_EQ(strataCommInitMpi(&c, MPI_COMM_WORLD, nullptr), strataSuccess);
  ASSERT_EQ(strataCommDestroy(c), strataSuccess);
  EXPECT_EQ(strataAllReduce(send_.data(), recv_.data(), 4, strataFloat32, strataSum, c, nullptr), strataInvalidArgument);
  EXPECT_TRUE(contains(strataGetLastError(c), "not a live communicator")) << strataGetLastError(c);
  EXPECT_EQ(strataCommDestroy(c), strataInvalidArgument);
  int n = 0;
  EXPECT_EQ(strataCommCount(c, &n), strataInvalidArgument);
  strataResult_t async = strataInternalError;
  EXPECT_EQ(strataCommGetAsyncError(c, &async), strataInvalidArgument);
  EXPECT_TRUE(contains(strataGetLastError(nullptr), "not a live communicator")) << strataGetLastError(nullptr);
  EXPECT_EQ(strataCommGetAsyncError(nullptr, &async), strataInvalidArgument);
  EXPECT_TRUE(contains(strataGetLastError(nullptr), "comm is NULL")) << strataGetLastError(nullptr);
  EXPECT_EQ(async, strataInternalError) << "nothing is written on an error";
  EXPECT_EQ(strataCommInitMpi(nullptr, MPI_COMM_WORLD, nullptr), strataInvalidArgument);
  EXPECT_EQ(strataCommInitMpi(&c, MPI_COMM_NULL, nullptr), strataInvalidArgument);
  EXPECT_TRUE(contains(strataGetLastError(nullptr), "MPI_COMM_NULL")) << strataGetLastError(nullptr);
  EXPECT_TRUE(recvUntouched());
}

// A handle kept past its destroy: the communicators created after it never take its address
// (malloc would hand the freed block of the same size to the next one), so the stale handle is
// still refused instead of reaching a new communicator.
TEST_F(Negative, AHandleUsedAfterItsDestroyDoesNotReachANewCommunicator) {
  strataComm_t stale = nullptr;
  ASSERT_EQ(strataCommInitMpi(&stale, MPI_COMM_WORLD, nullptr), strataSuccess);
  ASSERT_EQ(strataCommDestroy(stale), strataSuccess);
  std::vector<strataComm_t> fresh(4, nullptr);
  for (strataComm_t& c : fresh) {
    ASSERT_EQ(strataCommInitMpi(&c, MPI_COMM_WORLD, nullptr), strataSuccess);
    EXPECT_NE(c, stale);
  }
  int n = 0;
  EXPECT_EQ(strataCommCount(stale, &n), strataInvalidArgument);
  EXPECT_EQ(strataAllReduce(send_.data(), recv_.data(), 4, strataFloat32, strataSum, stale, nullptr), strataInvalidArgument);
  EXPECT_TRUE(contains(strataGetLastError(stale), "not a live communicator")) << strataGetLastError(stale);
  EXPECT_TRUE(recvUntouched());
  for (strataComm_t c : fresh) EXPECT_EQ(strataCommDestroy(c), strataSuccess);
}

TEST_F(Negative, BadConfig) {
  strataComm_t c = nullptr;
  strataConfig_t config = STRATA_CONFIG_INITIALIZER;
  config.ranksPerNode = -3;
  EXPECT_EQ(strataCommInitMpi(&c, MPI_COMM_WORLD, &config), strataInvalidArgument);
  EXPECT_TRUE(contains(strataGetLastError(nullptr), "ranksPerNode")) << strataGetLastError(nullptr);
  EXPECT_EQ(c, nullptr);
}

// One rank's cost file cannot be read (a relative path on a node whose working directory lacks
// it): every rank's strataCommInitMpi fails, at once, instead of the others going on into the
// collectives that create the communicator and waiting there for the rank that left. Then a node
// shape that does not fit the communicator on the last rank only.
TEST_F(Negative, AConfigurationOnlyOneRankCannotUseFailsEveryRank) {
  const int me = worldRank(), last = worldSize() - 1;
  strataComm_t c = nullptr;
  if (me == 0) setenv("STRATA_TOPO_FILE", "/nonexistent/strata-costs.txt", 1);
  const auto start = std::chrono::steady_clock::now();
  const strataResult_t rc = strataCommInitMpi(&c, MPI_COMM_WORLD, nullptr);
  unsetenv("STRATA_TOPO_FILE");
  EXPECT_EQ(c, nullptr);
  if (me == 0) {
    EXPECT_NE(rc, strataSuccess);
    EXPECT_TRUE(contains(strataGetLastError(nullptr), "/nonexistent/strata-costs.txt")) << strataGetLastError(nullptr);
  } else {
    EXPECT_EQ(rc, strataRemoteError) << strataGetLastError(nullptr);
    EXPECT_TRUE(contains(strataGetLastError(nullptr), "another rank could not create the communicator"))
        << strataGetLastError(nullptr);
  }
  // Node sizes adding up to one rank more than there are, on the last rank only.
  if (me == last) setenv("STRATA_RANKS_PER_NODE", ("1," + std::to_string(worldSize())).c_str(), 1);
  const strataResult_t shaped = strataCommInitMpi(&c, MPI_COMM_WORLD, nullptr);
  unsetenv("STRATA_RANKS_PER_NODE");
  EXPECT_EQ(c, nullptr);
  EXPECT_EQ(shaped, me == last ? strataInvalidArgument : strataRemoteError) << strataGetLastError(nullptr);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 30.0);
  // The communicator still works for everyone: the failed creations left no collective behind.
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_F(Negative, UnknownForcedAlgorithmSaysWhatExists) {
  strataComm_t c = commFor("0", "allreduce=nonsense");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(strataAllReduce(send_.data(), recv_.data(), 4, strataFloat32, strataSum, c, nullptr), strataInvalidArgument);
  EXPECT_TRUE(contains(strataGetLastError(c), "no allreduce algorithm named 'nonsense'")) << strataGetLastError(c);
  EXPECT_TRUE(contains(strataGetLastError(c), "ring")) << strataGetLastError(c);
  EXPECT_TRUE(recvUntouched());
}

// Rank 0 forces another algorithm than its peers: every rank refuses the call when it first builds
// its plan, naming the rank that differs, instead of running plans whose messages do not match.
// An allgatherv whose receive counts differ between ranks (each rank's own arguments valid): every
// rank refuses it, naming the difference, instead of moving blocks its peers do not expect; the
// same call with the same counts then runs.
TEST_F(Negative, AllGathervCountsThatDifferBetweenRanksAreRefused) {
  const int p = worldSize(), me = worldRank();
  if (p < 2) GTEST_SKIP() << "needs two ranks";
  std::vector<size_t> counts(static_cast<size_t>(p), 1), displs(static_cast<size_t>(p));
  if (me == 0) counts[1] = 2;  // rank 0 expects two elements from rank 1, which sends one
  for (size_t r = 1; r < displs.size(); ++r) displs[r] = displs[r - 1] + counts[r - 1];
  std::vector<float> x(2, static_cast<float>(me)), all(static_cast<size_t>(p) + 1, -1.0f);
  EXPECT_EQ(strataAllGatherv(x.data(), counts[static_cast<size_t>(me)], all.data(), counts.data(), displs.data(),
                             strataFloat32, comm_, nullptr),
            strataInvalidUsage);
  EXPECT_TRUE(contains(strataGetLastError(comm_), "other recvcounts")) << strataGetLastError(comm_);
  counts.assign(static_cast<size_t>(p), 1);
  for (size_t r = 1; r < displs.size(); ++r) displs[r] = displs[r - 1] + 1;
  ASSERT_EQ(strataAllGatherv(x.data(), 1, all.data(), counts.data(), displs.data(), strataFloat32, comm_, nullptr),
            strataSuccess)
      << strataGetLastError(comm_);
  EXPECT_EQ(all[static_cast<size_t>(p) - 1], static_cast<float>(p - 1));
}

TEST_F(Negative, RanksThatChooseDifferentPlansAreRefused) {
  if (worldSize() < 2) GTEST_SKIP() << "needs two ranks";
  strataComm_t c = nullptr;
  strataConfig_t config = STRATA_CONFIG_INITIALIZER;
  config.algorithm = worldRank() == 0 ? "allreduce=ring" : "allreduce=recursive_doubling";
  ASSERT_EQ(strataCommInitMpi(&c, MPI_COMM_WORLD, &config), strataSuccess);
  std::vector<float> x(64, 1.0f), y(64, 0.0f);
  EXPECT_EQ(strataAllReduce(x.data(), y.data(), x.size(), strataFloat32, strataSum, c, nullptr), strataInvalidUsage);
  const std::string msg = strataGetLastError(c);
  EXPECT_TRUE(contains(msg.c_str(), "chose another algorithm")) << msg;
  EXPECT_TRUE(contains(msg.c_str(), worldRank() == 0 ? "rank 1" : "rank 0")) << msg;
  EXPECT_EQ(y[0], 0.0f) << "nothing written";
  // Counts that differ between ranks are named as such.
  EXPECT_EQ(strataBroadcast(x.data(), x.data(), worldRank() == 0 ? 8 : 9, strataFloat32, 0, comm_, nullptr),
            strataInvalidUsage);
  EXPECT_TRUE(contains(strataGetLastError(comm_), "passed count")) << strataGetLastError(comm_);
  EXPECT_EQ(strataCommDestroy(c), strataSuccess);
}

TEST_F(Negative, CountZeroIsAValidNoOp) {
  EXPECT_EQ(strataAllReduce(nullptr, nullptr, 0, strataFloat32, strataSum, comm_, nullptr), strataSuccess);
  EXPECT_EQ(strataBroadcast(nullptr, nullptr, 0, strataFloat32, 0, comm_, nullptr), strataSuccess);
  EXPECT_EQ(strataReduceScatter(nullptr, nullptr, 0, strataFloat32, strataSum, comm_, nullptr), strataSuccess);
}

TEST_F(Negative, QueriesAndErrorStrings) {
  int n = -1, r = -1;
  ASSERT_EQ(strataCommCount(comm_, &n), strataSuccess);
  ASSERT_EQ(strataCommUserRank(comm_, &r), strataSuccess);
  EXPECT_EQ(n, worldSize());
  EXPECT_EQ(r, worldRank());
  EXPECT_EQ(strataCommCount(comm_, nullptr), strataInvalidArgument);
  strataResult_t async = strataInternalError;
  ASSERT_EQ(strataCommGetAsyncError(comm_, &async), strataSuccess);
  EXPECT_EQ(async, strataSuccess) << "a usable communicator whose calls all succeeded";
  EXPECT_EQ(strataCommGetAsyncError(comm_, nullptr), strataInvalidArgument);
  EXPECT_TRUE(contains(strataGetLastError(comm_), "asyncError is NULL")) << strataGetLastError(comm_);
  for (int code = 0; code <= strataTimeout; ++code) {
    EXPECT_GT(std::strlen(strataGetErrorString(static_cast<strataResult_t>(code))), 5u);
  }
}

// Rank 0 waits for a peer that never calls: the wait ends with strataTimeout naming the collective,
// its sequence number, the step and the peer, and the communicator refuses further calls.
TEST(Timeout, NamesTheCollectiveStepAndPeer) {
  if (worldSize() < 2) GTEST_SKIP() << "needs a peer";
  strataComm_t c = nullptr;
  strataConfig_t config = STRATA_CONFIG_INITIALIZER;
  config.timeoutSeconds = 1.0;
  config.algorithm = "allreduce=ring";
  ASSERT_EQ(strataCommInitMpi(&c, MPI_COMM_WORLD, &config), strataSuccess);
  std::vector<float> x(1024, 1.0f), y(1024);
  // Every rank builds the plan (and agrees on it) in the first call; rank 0 alone makes the second.
  ASSERT_EQ(strataAllReduce(x.data(), y.data(), x.size(), strataFloat32, strataSum, c, nullptr), strataSuccess);
  if (worldRank() == 0) {
    const strataResult_t rc = strataAllReduce(x.data(), y.data(), x.size(), strataFloat32, strataSum, c, nullptr);
    EXPECT_EQ(rc, strataTimeout);
    const std::string msg = strataGetLastError(c);
    EXPECT_TRUE(contains(msg.c_str(), "allreduce #2 (ring)")) << msg;
    EXPECT_TRUE(contains(msg.c_str(), "timed out after")) << msg;
    EXPECT_TRUE(contains(msg.c_str(), "step")) << msg;
    EXPECT_TRUE(contains(msg.c_str(), "from rank") || contains(msg.c_str(), "to rank")) << msg;
    EXPECT_EQ(strataAllReduce(x.data(), y.data(), x.size(), strataFloat32, strataSum, c, nullptr), strataTimeout);
    EXPECT_TRUE(contains(strataGetLastError(c), "unusable after an earlier error")) << strataGetLastError(c);
  }
  // The timeout left rank 0's communicator unusable, which the query reports; the others' query
  // hears rank 0's notice of it (sent before the barrier).
  MPI_Barrier(MPI_COMM_WORLD);
  strataResult_t async = strataInternalError;
  if (worldRank() == 0) {
    ASSERT_EQ(strataCommGetAsyncError(c, &async), strataSuccess) << strataGetLastError(c);
    EXPECT_EQ(async, strataTimeout);
  } else {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    do {
      ASSERT_EQ(strataCommGetAsyncError(c, &async), strataSuccess) << strataGetLastError(c);
    } while (async == strataSuccess && std::chrono::steady_clock::now() < end);
    EXPECT_EQ(async, strataRemoteError) << strataGetLastError(c);
    EXPECT_TRUE(contains(strataGetLastError(c), "rank 0's communicator failed")) << strataGetLastError(c);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(strataCommDestroy(c), strataSuccess);
}

// Abort with work pending: rank 0 waits in a collective its peers never join (over MPI with ring,
// in the node team with one-shot), another thread aborts the communicator, and the waiting call
// returns promptly with an error saying so, long before its timeout.
TEST(Abort, EndsACollectiveThatIsWaiting) {
  if (worldSize() < 2) GTEST_SKIP() << "needs ranks that do not join the collective";
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  if (level != MPI_THREAD_MULTIPLE) GTEST_SKIP() << "aborting from another thread needs MPI_THREAD_MULTIPLE";
  for (const char* algorithm : {"allreduce=ring", "allreduce=oneshot"}) {
    std::vector<float> x(4096, 1.0f), y(4096);
    // Rank 0 alone makes the second call.
    strataComm_t c = agreedOneNodeComm(algorithm, x, y);
    ASSERT_TRUE(allRanksOk(c != nullptr));
    MPI_Barrier(MPI_COMM_WORLD);
    if (worldRank() == 0) {
      strataResult_t waited = strataSuccess;
      std::string why;
      const auto start = std::chrono::steady_clock::now();
      std::thread caller([&] {
        waited = strataAllReduce(x.data(), y.data(), x.size(), strataFloat32, strataSum, c, nullptr);
        why = strataGetLastError(nullptr);
      });
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      EXPECT_EQ(strataCommAbort(c), strataSuccess) << algorithm << ": " << strataGetLastError(nullptr);
      caller.join();
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      EXPECT_NE(waited, strataSuccess) << algorithm;
      EXPECT_TRUE(contains(why.c_str(), "aborted")) << algorithm << ": " << why;
      EXPECT_LT(seconds, 10.0) << algorithm << ": the waiting call must end with the abort, not its timeout";
    }
    // The others abort only once rank 0's call ended: their abort tells it, which would end it first.
    MPI_Barrier(MPI_COMM_WORLD);
    if (worldRank() != 0) EXPECT_EQ(strataCommAbort(c), strataSuccess);
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

// Abort from one thread while another queries the communicator and a third aborts it too: one
// teardown frees it, each other call either finishes before it or is refused, none touches freed
// memory (AddressSanitizer's tier runs this test).
TEST(Abort, RacesWithQueriesAndASecondAbort) {
  for (int round = 0; round < 20; ++round) {
    strataComm_t c = nullptr;
    ASSERT_EQ(strataCommInitMpi(&c, MPI_COMM_WORLD, nullptr), strataSuccess);
    std::atomic<bool> go{false};
    std::atomic<int> refused{0};
    std::thread query([&] {
      while (!go.load()) std::this_thread::yield();
      int r = -1;
      strataResult_t async = strataSuccess;
      while (strataCommUserRank(c, &r) == strataSuccess) {
        if (r != worldRank()) ADD_FAILURE() << "rank " << r;
        // Success, the abort under way, or a peer's abort heard first.
        if (strataCommGetAsyncError(c, &async) == strataSuccess && async != strataSuccess && async != strataInvalidUsage &&
            async != strataRemoteError) {
          ADD_FAILURE() << "async error " << strataGetErrorString(async);
        }
        (void)strataCommLastAlgorithm(c);
        (void)strataGetLastError(c);
      }
      refused.fetch_add(1);
    });
    strataResult_t second = strataInternalError;
    std::thread abortToo([&] {
      while (!go.load()) std::this_thread::yield();
      second = strataCommAbort(c);
    });
    go.store(true);
    const strataResult_t first = strataCommAbort(c);
    query.join();
    abortToo.join();
    EXPECT_EQ(refused.load(), 1);
    // Either abort may free it; the other finds it claimed (success: it is going) or already gone.
    EXPECT_TRUE(first == strataSuccess || first == strataInvalidArgument) << strataGetErrorString(first);
    EXPECT_TRUE(second == strataSuccess || second == strataInvalidArgument) << strataGetErrorString(second);
    EXPECT_TRUE(first == strataSuccess || second == strataSuccess);
    int r = -1;
    EXPECT_EQ(strataCommUserRank(c, &r), strataInvalidArgument);
  }
}

// An abort between calls tells the peers: rank 0 aborts while they make a call that waits for it
// (bounded at 60 s), and they end at once with strataRemoteError naming rank 0 and the abort. Over
// MPI (ring) and in the node team (one-shot).
TEST(Abort, BetweenCallsEndsItsPeersWaitsAtOnce) {
  if (worldSize() < 2) GTEST_SKIP() << "needs a peer";
  for (const char* algorithm : {"allreduce=ring", "allreduce=oneshot"}) {
    std::vector<float> x(4096, 1.0f), y(4096);
    strataComm_t c = agreedOneNodeComm(algorithm, x, y);
    ASSERT_TRUE(allRanksOk(c != nullptr));
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = std::chrono::steady_clock::now();
    if (worldRank() == 0) {
      EXPECT_EQ(strataCommAbort(c), strataSuccess) << strataGetLastError(nullptr);
    } else {
      const strataResult_t rc = strataAllReduce(x.data(), y.data(), x.size(), strataFloat32, strataSum, c, nullptr);
      const std::string why = strataGetLastError(c);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      EXPECT_EQ(rc, strataRemoteError) << algorithm << ": " << why;
      EXPECT_TRUE(contains(why.c_str(), "rank 0's communicator failed")) << why;
      EXPECT_TRUE(contains(why.c_str(), "aborted")) << why;
      EXPECT_LT(seconds, 20.0) << algorithm << ": the call must end with the abort's notice, not the 60 s bound";
      EXPECT_EQ(strataCommAbort(c), strataSuccess) << strataGetLastError(nullptr);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

// A peer's abort reaches an idle rank's watchdog: rank 0 aborts between calls, and each other rank,
// making no call, polls strataCommGetAsyncError from a second thread until it reports
// strataRemoteError with rank 0's notice (well inside the communicator's 60 s bound); its next call
// then fails alike.
TEST(AsyncError, AnIdleRankHearsAPeersAbort) {
  if (worldSize() < 2) GTEST_SKIP() << "needs a peer";
  std::vector<float> x(4096, 1.0f), y(4096);
  strataComm_t c = agreedOneNodeComm("allreduce=ring", x, y);
  ASSERT_TRUE(allRanksOk(c != nullptr));
  MPI_Barrier(MPI_COMM_WORLD);
  if (worldRank() == 0) {
    EXPECT_EQ(strataCommAbort(c), strataSuccess) << strataGetLastError(nullptr);
  } else {
    strataResult_t seen = strataSuccess, queried = strataSuccess;
    double seconds = 0;
    std::string why;
    std::thread watchdog([&] {
      const auto start = std::chrono::steady_clock::now();
      while (seen == strataSuccess && queried == strataSuccess && seconds < 20.0) {
        queried = strataCommGetAsyncError(c, &seen);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
      why = strataGetLastError(c);
    });
    watchdog.join();
    EXPECT_EQ(queried, strataSuccess) << why;
    EXPECT_EQ(seen, strataRemoteError) << "after " << seconds << " s: " << why;
    EXPECT_TRUE(contains(why.c_str(), "strataCommGetAsyncError: rank 0's communicator failed")) << why;
    EXPECT_TRUE(contains(why.c_str(), "aborted")) << why;
    EXPECT_EQ(strataAllReduce(x.data(), y.data(), x.size(), strataFloat32, strataSum, c, nullptr), strataRemoteError)
        << strataGetLastError(c);
    EXPECT_EQ(strataCommAbort(c), strataSuccess) << strataGetLastError(nullptr);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(Abort, EndsTheCommunicator) {
  strataComm_t c = nullptr;
  ASSERT_EQ(strataCommInitMpi(&c, MPI_COMM_WORLD, nullptr), strataSuccess);
  EXPECT_EQ(strataCommAbort(c), strataSuccess);
  float x = 1, y = 0;
  EXPECT_EQ(strataAllReduce(&x, &y, 1, strataFloat32, strataSum, c, nullptr), strataInvalidArgument);
  EXPECT_TRUE(contains(strataGetLastError(c), "not a live communicator"));
  EXPECT_EQ(y, 0);
}

// One rank's own argument error, its peers' arguments valid: it returns the error at once and tells
// its peers, which stop waiting for it then, not at the communicator's bound, with
// strataRemoteError naming the rank, the call and its error. Their communicator is then unusable,
// and the refusing rank's next call hears so. Over MPI (ring) and in the node team (one-shot).
TEST(PeerNotices, OneRanksArgumentErrorEndsItsPeersWaitsAtOnce) {
  const int p = worldSize(), me = worldRank(), refuser = p - 1;
  if (p < 2) GTEST_SKIP() << "needs a peer";
  for (const char* algorithm : {"allreduce=ring", "allreduce=oneshot"}) {
    strataConfig_t config = STRATA_CONFIG_INITIALIZER;
    config.timeoutSeconds = 60;
    config.algorithm = algorithm;
    if (std::string(algorithm) == "allreduce=oneshot") config.ranksPerNode = p;  // one node: the team serves it
    strataComm_t c = nullptr;
    ASSERT_EQ(strataCommInitMpi(&c, MPI_COMM_WORLD, &config), strataSuccess);
    std::vector<float> x(4096, 1.0f), y(4096, 0.0f);
    ASSERT_EQ(strataAllReduce(x.data(), y.data(), x.size(), strataFloat32, strataSum, c, nullptr), strataSuccess)
        << algorithm << ": " << strataGetLastError(c);
    const auto start = std::chrono::steady_clock::now();
    const strataRedOp_t op = me == refuser ? static_cast<strataRedOp_t>(9) : strataSum;
    const strataResult_t second = strataAllReduce(x.data(), y.data(), x.size(), strataFloat32, op, c, nullptr);
    const std::string why = strataGetLastError(c);
    // A refusal leaves the refusing rank's communicator usable until it hears its peers' answers
    // (the query may read them already); theirs failed.
    strataResult_t async = strataInternalError;
    EXPECT_EQ(strataCommGetAsyncError(c, &async), strataSuccess);
    if (me == refuser) {
      EXPECT_TRUE(async == strataSuccess || async == strataRemoteError) << algorithm << ": " << strataGetErrorString(async);
    } else {
      EXPECT_EQ(async, strataRemoteError) << algorithm << ": " << strataGetErrorString(async);
    }
    const strataResult_t third = strataAllReduce(x.data(), y.data(), x.size(), strataFloat32, strataSum, c, nullptr);
    const std::string whyThird = strataGetLastError(c);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (me == refuser) {
      EXPECT_EQ(second, strataInvalidArgument) << algorithm << ": " << why;
      EXPECT_TRUE(contains(why.c_str(), "invalid reduction op 9")) << why;
      EXPECT_EQ(third, strataRemoteError) << algorithm << ": " << whyThird;
      EXPECT_TRUE(contains(whyThird.c_str(), "communicator failed in call #2")) << whyThird;
    } else {
      EXPECT_EQ(second, strataRemoteError) << algorithm << ": " << why;
      EXPECT_TRUE(contains(why.c_str(), "rank " + std::to_string(refuser) + " refused call #2")) << why;
      EXPECT_TRUE(contains(why.c_str(), "strataAllReduce: invalid reduction op 9")) << why;
      EXPECT_EQ(third, strataRemoteError) << algorithm << ": " << whyThird;
      EXPECT_TRUE(contains(whyThird.c_str(), "unusable after an earlier error")) << whyThird;
    }
    EXPECT_LT(seconds, 20.0) << algorithm << ": the calls must end with the notices, not the 60 s bound";
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_EQ(strataCommDestroy(c), strataSuccess);
  }
}

// A rank whose part of the refused call did not need the refusing rank (the root of a broadcast of
// a few bytes sends and returns) may finish it; its next call hears the refusal and fails, before
// it communicates, as every other rank's does.
TEST(PeerNotices, ARankThatFinishedTheRefusedCallFailsItsNextOne) {
  const int p = worldSize(), me = worldRank(), refuser = p - 1;
  if (p < 2) GTEST_SKIP() << "needs a peer";
  strataConfig_t config = STRATA_CONFIG_INITIALIZER;
  config.timeoutSeconds = 60;
  config.algorithm = "broadcast=binomial";
  strataComm_t c = nullptr;
  ASSERT_EQ(strataCommInitMpi(&c, MPI_COMM_WORLD, &config), strataSuccess);
  std::vector<float> x(4, 1.0f), y(4, 0.0f);
  ASSERT_EQ(strataBroadcast(x.data(), y.data(), x.size(), strataFloat32, 0, c, nullptr), strataSuccess)
      << strataGetLastError(c);
  const auto start = std::chrono::steady_clock::now();
  const strataResult_t refused = strataBroadcast(x.data(), me == refuser ? nullptr : y.data(), x.size(), strataFloat32,
                                                 0, c, nullptr);
  const strataResult_t next = strataAllReduce(x.data(), y.data(), x.size(), strataFloat32, strataSum, c, nullptr);
  const std::string why = strataGetLastError(c);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (me == refuser) {
    EXPECT_EQ(refused, strataInvalidArgument);
  } else {
    EXPECT_TRUE(refused == strataSuccess || refused == strataRemoteError) << strataGetErrorString(refused);
  }
  EXPECT_EQ(next, strataRemoteError) << why;
  EXPECT_TRUE(contains(why.c_str(), "refused call #2") || contains(why.c_str(), "failed in call #2")) << why;
  EXPECT_LT(seconds, 20.0) << "the calls must end with the notices, not the 60 s bound";
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(strataCommDestroy(c), strataSuccess);
}

// Every rank refusing the same call (the same wrong argument everywhere) leaves the communicator
// usable: each hears the others' refusals of a call it refused itself.
TEST(PeerNotices, EveryRankRefusingTheSameCallLeavesTheCommunicatorUsable) {
  const int p = worldSize();
  strataConfig_t config = STRATA_CONFIG_INITIALIZER;
  config.timeoutSeconds = 60;
  strataComm_t c = nullptr;
  ASSERT_EQ(strataCommInitMpi(&c, MPI_COMM_WORLD, &config), strataSuccess);
  std::vector<float> x(1000, 1.0f), y(1000, 0.0f);
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(strataAllReduce(x.data(), y.data(), x.size(), strataFloat32, static_cast<strataRedOp_t>(9), c, nullptr),
              strataInvalidArgument);
    EXPECT_EQ(strataBroadcast(x.data(), y.data(), x.size(), strataFloat32, p, c, nullptr), strataInvalidArgument);
    ASSERT_EQ(strataAllReduce(x.data(), y.data(), x.size(), strataFloat32, strataSum, c, nullptr), strataSuccess)
        << strataGetLastError(c);
    EXPECT_EQ(y[999], static_cast<float>(p));
  }
  EXPECT_EQ(strataCommDestroy(c), strataSuccess);
}

// strataCommRefuseCall: a call one rank will not make, for a reason of its own, refused as a call
// whose arguments Strata refused there; its peers' part fails at once, naming the rank and the
// reason. Made by every rank alike, the communicator stays usable.
TEST(PeerNotices, ARefusedCallEndsItsPeersWaitsAndEveryRanksRefusalLeavesTheCommunicatorUsable) {
  const int p = worldSize(), me = worldRank(), refuser = p - 1;
  strataConfig_t config = STRATA_CONFIG_INITIALIZER;
  config.timeoutSeconds = 60;
  strataComm_t c = nullptr;
  ASSERT_EQ(strataCommInitMpi(&c, MPI_COMM_WORLD, &config), strataSuccess);
  std::vector<float> x(1000, 1.0f), y(1000, 0.0f);
  EXPECT_EQ(strataCommRefuseCall(nullptr, "x"), strataInvalidArgument);
  for (int round = 0; round < 2; ++round) {  // every rank refuses, twice in a row: usable
    EXPECT_EQ(strataCommRefuseCall(c, "every rank's reason"), strataSuccess);
    EXPECT_TRUE(contains(strataGetLastError(c), "refused by the caller: every rank's reason")) << strataGetLastError(c);
    EXPECT_EQ(strataCommRefuseCall(c, nullptr), strataSuccess);  // waits for the peers' answers to the first
    EXPECT_TRUE(contains(strataGetLastError(c), "refused by the caller: (no reason given)")) << strataGetLastError(c);
    ASSERT_EQ(strataAllReduce(x.data(), y.data(), x.size(), strataFloat32, strataSum, c, nullptr), strataSuccess)
        << strataGetLastError(c);
    EXPECT_EQ(y[999], static_cast<float>(p));
  }
  if (p > 1) {  // one rank refuses: its peers' call ends at once
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = std::chrono::steady_clock::now();
    const strataResult_t rc = me == refuser ? strataCommRefuseCall(c, "a reason of its own")
                                            : strataAllReduce(x.data(), y.data(), x.size(), strataFloat32, strataSum, c, nullptr);
    const std::string why = strataGetLastError(c);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (me == refuser) {
      EXPECT_EQ(rc, strataSuccess) << why;
    } else {
      EXPECT_EQ(rc, strataRemoteError) << why;
      EXPECT_TRUE(contains(why.c_str(), "rank " + std::to_string(refuser) + " refused call #7")) << why;  // after 2 x (2 refusals, allreduce)
      EXPECT_TRUE(contains(why.c_str(), "strataCommRefuseCall: refused by the caller: a reason of its own")) << why;
    }
    EXPECT_LT(seconds, 20.0) << "the call must end with the notice, not the 60 s bound";
    EXPECT_NE(strataAllReduce(x.data(), y.data(), x.size(), strataFloat32, strataSum, c, nullptr), strataSuccess)
        << "a call after one rank's refusal";
    MPI_Barrier(MPI_COMM_WORLD);
  }
  EXPECT_EQ(strataCommDestroy(c), strataSuccess);
}

}  // namespace
}  // namespace strata::test
