// A rank whose host runs out of memory in a call: every C entry point returns a code (no exception
// crosses the C boundary: strataGetLastError, the queries and the collectives alike), the call fails
// on every rank within the communicator's bound, and the communicator can still be destroyed. The
// process's operator new is replaced (failing_new.h): while armed, every C++ allocation fails,
// those of the error's own message included.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "tests/mpi/failing_new.h"
#include "tests/mpi/mpi_test_util.h"

namespace strata::test {
namespace {

bool contains(const char* text, const std::string& part) { return text != nullptr && std::string(text).find(part) != std::string::npos; }

constexpr double kBoundSeconds = 5;

strataComm_t boundedComm() {
  strataConfig_t config = STRATA_CONFIG_INITIALIZER;
  config.timeoutSeconds = kBoundSeconds;
  strataComm_t c = nullptr;
  EXPECT_EQ(strataCommInitMpi(&c, MPI_COMM_WORLD, &config), strataSuccess) << strataGetLastError(nullptr);
  return c;
}

// The last rank has no host memory through one allreduce of a count no call had before (its plan
// is built in that call, and allocates). Its own call fails with strataSystemError, its message
// kept as the short one that needs no memory; its peers', waiting for it, fail by the bound at the
// latest. After it, every rank's next call fails, and each destroys the communicator: the rank
// that could not tell its peers failed it (before, its next call met the peers' call it had
// failed, a call of its own matched to an earlier one of theirs).
TEST(NoHostMemory, ACollectiveFailsOnEveryRankWithoutAnExceptionEscaping) {
  const int p = worldSize(), me = worldRank(), victim = p - 1;
  strataComm_t c = boundedComm();
  ASSERT_NE(c, nullptr);
  std::vector<float> x(1021, 1.0f), y(1021, 0.0f);
  ASSERT_EQ(strataAllReduce(x.data(), y.data(), 16, strataFloat32, strataSum, c, nullptr), strataSuccess)
      << strataGetLastError(c);
  MPI_Barrier(MPI_COMM_WORLD);  // every rank out of the warm-up
  const long failedBefore = failedAllocations();
  const auto start = std::chrono::steady_clock::now();
  if (me == victim) failAllocationsFrom(0);
  const strataResult_t rc = strataAllReduce(x.data(), y.data(), x.size(), strataFloat32, strataSum, c, nullptr);
  const std::string why = strataGetLastError(c);  // kept within the string's own buffer
  allowAllocations();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (me == victim) {
    EXPECT_EQ(rc, strataSystemError) << strataGetErrorString(rc) << ": " << why;
    EXPECT_TRUE(contains(why.c_str(), "no host memory")) << why;
    EXPECT_GT(failedAllocations(), failedBefore) << "no allocation failed: the call did not allocate";
  } else {
    EXPECT_NE(rc, strataSuccess) << "a peer of the rank without memory";
  }
  EXPECT_LT(seconds, 3 * kBoundSeconds + 10) << "the call must end within the communicator's bound";
  const strataResult_t next = strataAllReduce(x.data(), y.data(), x.size(), strataFloat32, strataSum, c, nullptr);
  const std::string whyNext = strataGetLastError(c);
  if (me == victim) {
    // Failed by this rank, which could not tell its peers: not run against their earlier call.
    EXPECT_EQ(next, strataSystemError) << whyNext;
    EXPECT_TRUE(contains(whyNext.c_str(), "unusable after an earlier error: no host memory")) << whyNext;
  } else {
    EXPECT_NE(next, strataSuccess) << "the call after it, on a communicator that failed";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(strataCommDestroy(c), strataSuccess) << strataGetLastError(nullptr);
}

// Where no allocation succeeds, the entry points that need none still answer, and those that do
// return a code: the queries, the last error, an argument error (reported as the lack of memory
// that kept its message from being built) and a communicator's creation (on a communicator of this
// rank alone, which needs no peer).
TEST(NoHostMemory, EveryEntryPointAnswersWithACode) {
  strataComm_t c = boundedComm();
  ASSERT_NE(c, nullptr);
  std::vector<float> x(8, 1.0f), y(8, 0.0f);
  ASSERT_EQ(strataAllReduce(x.data(), y.data(), x.size(), strataFloat32, strataSum, c, nullptr), strataSuccess);
  const std::string lastAlgorithm = strataCommLastAlgorithm(c);
  const long failedBefore = failedAllocations();
  failAllocationsFrom(0);
  int count = 0, rank = -1;
  const strataResult_t countRc = strataCommCount(c, &count);
  const strataResult_t rankRc = strataCommUserRank(c, &rank);
  strataResult_t async = strataInternalError;
  const strataResult_t asyncRc = strataCommGetAsyncError(c, &async);
  const char* algorithm = strataCommLastAlgorithm(c);
  // An argument error on this rank alone would leave the peers waiting: every rank makes it.
  const strataResult_t nullRc = strataAllReduce(nullptr, y.data(), x.size(), strataFloat32, strataSum, c, nullptr);
  const std::string nullWhy = strataGetLastError(c);
  strataComm_t self = nullptr;
  const strataResult_t selfRc = strataCommInitMpi(&self, MPI_COMM_SELF, nullptr);
  const std::string selfWhy = strataGetLastError(nullptr);
  allowAllocations();
  EXPECT_EQ(countRc, strataSuccess);
  EXPECT_EQ(count, worldSize());
  EXPECT_EQ(rankRc, strataSuccess);
  EXPECT_EQ(rank, worldRank());
  EXPECT_EQ(asyncRc, strataSuccess);
  EXPECT_EQ(async, strataSuccess);
  EXPECT_EQ(lastAlgorithm, algorithm);
  EXPECT_EQ(nullRc, strataSystemError) << nullWhy;  // its message could not be built: the lack of memory is what it reports
  EXPECT_TRUE(contains(nullWhy.c_str(), "no host memory")) << nullWhy;
  EXPECT_EQ(selfRc, strataSystemError) << selfWhy;
  EXPECT_EQ(self, nullptr);
  EXPECT_TRUE(contains(selfWhy.c_str(), "no host memory")) << selfWhy;
  EXPECT_GT(failedAllocations(), failedBefore);
  // Without memory to tell its peers, each rank failed the communicator (failUntold): its next call
  // fails, and it is destroyed; a new one works and is right.
  EXPECT_NE(strataAllReduce(x.data(), y.data(), x.size(), strataFloat32, strataSum, c, nullptr), strataSuccess);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(strataCommDestroy(c), strataSuccess) << strataGetLastError(nullptr);
  c = boundedComm();
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(strataAllReduce(x.data(), y.data(), x.size(), strataFloat32, strataSum, c, nullptr), strataSuccess)
      << strataGetLastError(c);
  EXPECT_EQ(y[7], static_cast<float>(worldSize()));
  EXPECT_EQ(strataCommDestroy(c), strataSuccess) << strataGetLastError(nullptr);
}

}  // namespace
}  // namespace strata::test
