// GPU tier with MPI: the collectives on device buffers through the public API, ordered on the
// caller's stream. For each call a kernel writes the input on the stream just before it and
// another copies the output away just after, with no synchronisation in between: a collective
// that read its input early or finished late gives wrong values. The oracle is perf/reference
// (computed on the host, independently of the library). Skips on ranks without a CUDA device.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "inter_node/executor.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/common/status.h"
#include "kernels/cuda/device_api.cuh"
#include "tests/reference/reference.h"
#include "tests/gpu/device_buffer.h"
#include "src/core/introspection.h"
#include "tests/mpi/mpi_test_util.h"

#if defined(STRATA_CUDA_SIM)
#include <cuda_sim/cuda_sim.h>
#endif

namespace strata::test {
namespace {

// The node shape under test (STRATA_TEST_SHAPE: "0" discovers, "2" makes virtual nodes of 2, "3,5").
std::string testShape() {
  const char* e = std::getenv("STRATA_TEST_SHAPE");
  return e != nullptr && *e != '\0' ? e : "0";
}

// One block that first waits `delayNs` on the device, then copies: the input of a call, written
// late enough that a collective which does not wait for its stream reads it early.
__global__ void delayedCopyKernel(unsigned char* dst, const unsigned char* src, size_t n, unsigned long long delayNs) {
  if (threadIdx.x == 0) {
    const unsigned long long start = cuda::deviceTimerNs();
    while (cuda::deviceTimerNs() - start < delayNs) __nanosleep(1000);
  }
  __syncthreads();
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) cuda::storeGlobal(dst + i, cuda::loadGlobal(src + i));
}

bool everyRankHasDevice() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    n = 0;
  }
  int mine = n > 0 ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (n > 0) cudaSetDevice(worldRank() % n);  // several ranks share a GPU on a one-GPU machine
  return all == 1;
}

enum class Coll { kAllReduce, kBroadcast, kReduce, kAllGather, kReduceScatter, kGather, kScatter, kAllToAll, kScan, kExscan };
const char* collName(Coll c) {
  const char* names[] = {"allreduce", "broadcast", "reduce", "allgather", "reducescatter",
                         "gather",    "scatter",   "alltoall", "scan",    "exscan"};
  return names[static_cast<int>(c)];
}

struct Layout {
  size_t sendElems, recvElems;
  bool recvChecked;  // this rank's output is defined
};

Layout layoutOf(Coll c, size_t n, int p, int me, int root) {
  const size_t np = n * static_cast<size_t>(p);
  switch (c) {
    case Coll::kAllReduce: case Coll::kScan: return {n, n, true};
    case Coll::kExscan: return {n, n, me != 0};
    case Coll::kBroadcast: return {n, n, true};
    case Coll::kReduce: return {n, n, me == root};
    case Coll::kAllGather: return {n, np, true};
    case Coll::kReduceScatter: return {np, n, true};
    case Coll::kGather: return {n, np, me == root};
    case Coll::kScatter: return {np, n, true};
    case Coll::kAllToAll: return {np, np, true};
  }
  return {0, 0, false};
}

// What rank `me` must hold after the call.
std::vector<unsigned char> expected(Coll c, strataDataType_t t, strataRedOp_t op, size_t n, int p, int me, int root,
                                    unsigned seed) {
  const Layout l = layoutOf(c, n, p, me, root);
  std::vector<unsigned char> out(l.recvElems * typeSize(t));
  for (size_t i = 0; i < l.recvElems; ++i) {
    double v = 0;
    switch (c) {
      case Coll::kAllReduce: case Coll::kReduce: v = reduceReference(t, op, p, i, seed); break;
      case Coll::kBroadcast: v = inputValue(t, op, root, i, seed); break;
      case Coll::kAllGather: case Coll::kGather: v = inputValue(t, op, static_cast<int>(i / n), i % n, seed); break;
      case Coll::kReduceScatter: v = reduceReference(t, op, p, static_cast<size_t>(me) * n + i, seed); break;
      case Coll::kScatter: v = inputValue(t, op, root, static_cast<size_t>(me) * n + i, seed); break;
      case Coll::kAllToAll: v = inputValue(t, op, static_cast<int>(i / n), static_cast<size_t>(me) * n + i % n, seed); break;
      case Coll::kScan: v = reduceRange(t, op, 0, me, i, seed); break;
      case Coll::kExscan: v = me == 0 ? 0 : reduceRange(t, op, 0, me - 1, i, seed); break;
    }
    writeValue(t, out.data(), i, v);
  }
  return out;
}

strataResult_t call(Coll c, const void* s, void* r, size_t n, strataDataType_t t, strataRedOp_t op, int root,
                    strataComm_t comm, cudaStream_t st) {
  switch (c) {
    case Coll::kAllReduce: return strataAllReduce(s, r, n, t, op, comm, st);
    case Coll::kBroadcast: return strataBroadcast(s, r, n, t, root, comm, st);
    case Coll::kReduce: return strataReduce(s, r, n, t, op, root, comm, st);
    case Coll::kAllGather: return strataAllGather(s, r, n, t, comm, st);
    case Coll::kReduceScatter: return strataReduceScatter(s, r, n, t, op, comm, st);
    case Coll::kGather: return strataGather(s, r, n, t, root, comm, st);
    case Coll::kScatter: return strataScatter(s, r, n, t, root, comm, st);
    case Coll::kAllToAll: return strataAlltoAll(s, r, n, t, comm, st);
    case Coll::kScan: return strataScan(s, r, n, t, op, comm, st);
    case Coll::kExscan: return strataExscan(s, r, n, t, op, comm, st);
  }
  return strataInternalError;
}

// Runs one call on device buffers ordered on `stream`; returns "" or what went wrong.
std::string runOnDevice(strataComm_t comm, Coll c, strataDataType_t t, strataRedOp_t op, size_t n, int root,
                        unsigned seed, cudaStream_t stream) {
  const int p = worldSize(), me = worldRank();
  const size_t es = typeSize(t);
  const Layout l = layoutOf(c, n, p, me, root);
  std::vector<unsigned char> input(l.sendElems * es);
  const int fillRank = me;
  if (c == Coll::kBroadcast || c == Coll::kScatter) {
    if (me == root) fillInput(t, op, root, input.data(), 0, l.sendElems, seed);
  } else {
    fillInput(t, op, fillRank, input.data(), 0, l.sendElems, seed);
  }
  DeviceBytes source(input), send(input.size() + 1, 0xEE), recv(l.recvElems * es + 1, 0xEE),
      copied(l.recvElems * es + 1, 0xEE);
  unsigned char* sendPtr = send.ptr();
  unsigned char* recvPtr = recv.ptr();
  // The input is written by a kernel on the stream just before the call, after a delay ...
  cuda::launchKernel("delayedCopyKernel", delayedCopyKernel, 1, 256, stream, sendPtr,
                     static_cast<const unsigned char*>(source.ptr()), input.size(), 2000000ull);
  if (cudaGetLastError() != cudaSuccess) return "launch";
  const strataResult_t rc = call(c, sendPtr, recvPtr, n, t, op, root, comm, stream);
  if (rc != strataSuccess) return std::string("returned ") + strataGetErrorString(rc) + ": " + strataGetLastError(comm);
  // ... and the output read by another just after it.
  if (!cuda::launchCopy(copied.ptr(), recvPtr, l.recvElems * es, stream).ok()) return "launch";
  if (cudaStreamSynchronize(stream) != cudaSuccess) return "cudaStreamSynchronize failed";
  const std::vector<unsigned char> got = copied.host();
  if (got.back() != 0xEE) return "wrote past the end of recvbuff";
  if (!l.recvChecked) return "";
  const std::vector<unsigned char> want = expected(c, t, op, n, p, me, root, seed);
  const std::string wrong = compareElements(t, got.data(), want.data(), l.recvElems);
  if (wrong.empty()) return "";
  // Where the wrong values came from: the input as written, the send and receive buffers after the
  // call, the copy taken just after it.
  const auto head = [](const std::vector<unsigned char>& b) {
    std::string h;
    for (size_t i = 0; i < b.size() && i < 8; ++i) h += strata::strformat(" %02x", b[i]);
    return h;
  };
  return wrong + "; first bytes: input" + head(input) + ", send" + head(send.host()) + ", recv" + head(recv.host()) +
         ", copy" + head(got) + ", expected" + head(want);
}

// A non-blocking stream for a test, which destroys it.
cudaStream_t nonBlockingStream() {
  cudaStream_t stream = nullptr;
  EXPECT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  return stream;
}

// What the tests of the peer notices start from: a communicator in the node shape under test, its
// waits bounded at 60 s (the tests end long before), a stream, and device vectors x (n ones) and y,
// after an allreduce every rank joined (its plan agreed, so the next call's peers are under way at
// once). `error`: "" or what went wrong.
struct AgreedComm {
  static constexpr size_t n = 4096;
  strataComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  DeviceBytes x{std::vector<float>(n, 1.0f)}, y{std::vector<float>(n, 0.0f)};
  std::string error;

  explicit AgreedComm(double timeoutSeconds = 60) {
    if (testShape() != "0") setenv("STRATA_RANKS_PER_NODE", testShape().c_str(), 1);
    strataConfig_t config = STRATA_CONFIG_INITIALIZER;
    config.timeoutSeconds = timeoutSeconds;
    const strataResult_t made = strataCommInitMpi(&comm, MPI_COMM_WORLD, &config);
    unsetenv("STRATA_RANKS_PER_NODE");
    if (made != strataSuccess) {
      comm = nullptr;
      error = strataGetLastError(nullptr);
      return;
    }
    stream = nonBlockingStream();
    if (allReduce(strataSum) != strataSuccess) error = strataGetLastError(comm);
    else if (cudaStreamSynchronize(stream) != cudaSuccess) error = "cudaStreamSynchronize failed";
  }
  ~AgreedComm() {
    if (stream != nullptr) cudaStreamDestroy(stream);
  }
  strataResult_t allReduce(strataRedOp_t op) { return strataAllReduce(x.ptr(), y.ptr(), n, strataFloat32, op, comm, stream); }
  // Whether its calls run as single-kernel peer collectives, on every rank.
  bool peerKernels() const {
    tools::PeerCallInfo info;
    return allRanksOk(tools::lastPeerCall(comm, &info));
  }
};

// strataCommGetAsyncError polled (every millisecond, up to `seconds`) until it reports an error;
// strataSuccess when none came.
strataResult_t awaitAsyncError(strataComm_t comm, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  strataResult_t e = strataSuccess;
  while (strataCommGetAsyncError(comm, &e) == strataSuccess && e == strataSuccess && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return e;
}

class DeviceCollectives : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!everyRankHasDevice()) GTEST_SKIP() << "no CUDA device on every rank";
  }
};

TEST_F(DeviceCollectives, EveryCollectiveOrderedOnTheStream) {
  const int p = worldSize();
  strataComm_t comm = commFor(testShape(), "");
  ASSERT_NE(comm, nullptr);
  cudaStream_t stream = nonBlockingStream();
  bool ok = true;
  unsigned seed = 11;
  const Coll colls[] = {Coll::kAllReduce, Coll::kBroadcast, Coll::kReduce, Coll::kAllGather, Coll::kReduceScatter,
                        Coll::kGather,    Coll::kScatter,   Coll::kAllToAll, Coll::kScan,    Coll::kExscan};
  for (Coll c : colls) {
    const bool reduction = c == Coll::kAllReduce || c == Coll::kReduce || c == Coll::kReduceScatter ||
                           c == Coll::kScan || c == Coll::kExscan;
    std::vector<strataRedOp_t> ops = {strataSum};
    if (reduction) ops = {strataSum, strataMax, strataProd};
    if (c == Coll::kAllReduce || c == Coll::kReduceScatter) ops.push_back(strataAvg);
    // Every type on up to 4 ranks; on more (8 processes sharing the host's cores) one of each width.
    std::vector<strataDataType_t> types = {strataFloat32, strataInt32, strataBfloat16, strataFloat16, strataInt8, strataFloat64};
    if (p > 4) types = {strataFloat32, strataBfloat16, strataInt8, strataFloat64};
    for (strataDataType_t t : types) {
      for (strataRedOp_t op : ops) {
        // The large count (several grid-stride passes, many staging chunks) for two types only:
        // the simulator runs every element's thread on the host's cores.
        std::vector<size_t> counts = {1, static_cast<size_t>(p + 1), 1031};
        if (t == strataFloat32 || t == strataBfloat16) counts.push_back(262147);
        for (size_t n : counts) {
          const bool rooted = c == Coll::kBroadcast || c == Coll::kReduce || c == Coll::kGather || c == Coll::kScatter;
          for (int root : rooted ? std::vector<int>{0, p - 1} : std::vector<int>{0}) {
            const std::string why = runOnDevice(comm, c, t, op, n, root, seed++, stream);
            if (!why.empty()) {
              ok = false;
              ADD_FAILURE() << collName(c) << " " << typeName(t) << " " << opName(op) << " count " << n << " root "
                            << root << ": " << why;
            }
          }
        }
      }
    }
  }
  cudaStreamDestroy(stream);
  EXPECT_TRUE(allRanksOk(ok));
}

TEST_F(DeviceCollectives, TwoCommunicatorsOnTwoStreams) {
  strataComm_t a = commFor(testShape(), ""), b = commFor(testShape(), "allreduce=ring");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  cudaStream_t sa = nullptr, sb = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&sa, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking), cudaSuccess);
  const size_t n = 100003;
  const int p = worldSize();
  DeviceBytes xa(std::vector<float>(n, 1.0f)), xb(std::vector<float>(n, 2.0f));
  // Ten in-place allreduces on each, interleaved, never waited for in between: values grow by p
  // each time on both.
  for (int k = 0; k < 10; ++k) {
    ASSERT_EQ(strataAllReduce(xa.ptr(), xa.ptr(), n, strataFloat32, strataSum, a, sa), strataSuccess);
    ASSERT_EQ(strataAllReduce(xb.ptr(), xb.ptr(), n, strataFloat32, strataSum, b, sb), strataSuccess);
  }
  ASSERT_EQ(cudaStreamSynchronize(sa), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(sb), cudaSuccess);
  double pk = 1;
  for (int k = 0; k < 10; ++k) pk *= p;
  EXPECT_EQ(xa.hostAs<float>()[n - 1], static_cast<float>(pk));
  EXPECT_EQ(xb.hostAs<float>()[0], static_cast<float>(2 * pk));
  cudaStreamDestroy(sa);
  cudaStreamDestroy(sb);
}

// Two threads per rank, each making the first device call of its own communicator, the even ranks
// starting A's thread first and the odd ranks B's: each communicator's setup waits for its peers'
// setup, so a process that held one lock across its setup (the device path's allocation gate)
// would wait for the other process's other thread, which waits for the first's lock.
TEST_F(DeviceCollectives, TwoThreadsSetUpTwoCommunicatorsInOppositeOrders) {
  if (worldSize() < 2) GTEST_SKIP() << "needs peers whose setup order differs";
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  if (level != MPI_THREAD_MULTIPLE) GTEST_SKIP() << "needs MPI_THREAD_MULTIPLE";
  strataConfig_t config = STRATA_CONFIG_INITIALIZER;
  config.timeoutSeconds = 20;
  setenv("STRATA_RANKS_PER_NODE", testShape().c_str(), 1);
  strataComm_t comms[2] = {nullptr, nullptr};
  const strataResult_t madeA = strataCommInitMpi(&comms[0], MPI_COMM_WORLD, &config);
  const strataResult_t madeB = strataCommInitMpi(&comms[1], MPI_COMM_WORLD, &config);
  unsetenv("STRATA_RANKS_PER_NODE");
  ASSERT_EQ(madeA, strataSuccess);
  ASSERT_EQ(madeB, strataSuccess);
  const int p = worldSize();
  // Three calls, each larger than the last: the later ones grow the communicator's device scratch
  // while the other communicator may have calls queued.
  const size_t counts[3] = {4099, 65537, 262147}, n = counts[2];
  // Buffers and streams made here and freed after the threads: an allocation or free in a thread
  // while the other communicator holds its stream would wait for the device (README, "Allocation").
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  DeviceBytes xa(std::vector<float>(n, 1.0f)), xb(std::vector<float>(n, 2.0f));
  DeviceBytes* x[2] = {&xa, &xb};
  cudaStream_t streams[2] = {nonBlockingStream(), nonBlockingStream()};
  std::string why[2];
  const auto firstCalls = [&](int k) {
    cudaSetDevice(device);  // the current device is the thread's own
    for (int call = 0; call < 3 && why[k].empty(); ++call) {
      const strataResult_t rc =
          strataAllReduce(x[k]->ptr(), x[k]->ptr(), counts[call], strataFloat32, strataSum, comms[k], streams[k]);
      if (rc != strataSuccess) why[k] = std::string("allreduce: ") + strataGetLastError(comms[k]);
    }
    if (why[k].empty() && cudaStreamSynchronize(streams[k]) != cudaSuccess) why[k] = "cudaStreamSynchronize failed";
  };
  const int first = worldRank() % 2;
  std::thread early(firstCalls, first);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // its setup is under way
  std::thread late(firstCalls, 1 - first);
  early.join();
  late.join();
  for (int k = 0; k < 2; ++k) {
    // The first block took part in all three sums, the last in the largest alone.
    const std::vector<float> got = x[k]->hostAs<float>();
    const float inAll = static_cast<float>((k + 1) * p * p * p), inLast = static_cast<float>((k + 1) * p);
    if (why[k].empty() && (got[counts[0] - 1] != inAll || got[n - 1] != inLast)) {
      why[k] = "element " + std::to_string(counts[0] - 1) + " is " + std::to_string(got[counts[0] - 1]) + ", not " +
               std::to_string(inAll) + "; the last is " + std::to_string(got[n - 1]) + ", not " + std::to_string(inLast);
    }
    cudaStreamDestroy(streams[k]);
  }
  EXPECT_TRUE(why[0].empty()) << "communicator A: " << why[0];
  EXPECT_TRUE(why[1].empty()) << "communicator B: " << why[1];
  EXPECT_TRUE(allRanksOk(why[0].empty() && why[1].empty()));
  EXPECT_EQ(strataCommDestroy(comms[0]), strataSuccess);
  EXPECT_EQ(strataCommDestroy(comms[1]), strataSuccess);
}

// Stream 0, the legacy default stream: the input's delayed kernel and the output's copy run there,
// and the library's own streams are non-blocking, so the call must order itself explicitly (in the
// asynchronous and, under STRATA_DEVICE_SYNC=1, the synchronous path).
TEST_F(DeviceCollectives, LegacyDefaultStream) {
  strataComm_t comm = commFor(testShape(), "");
  ASSERT_NE(comm, nullptr);
  const int p = worldSize();
  bool ok = true;
  unsigned seed = 101;
  for (Coll c : {Coll::kAllReduce, Coll::kBroadcast, Coll::kAllGather, Coll::kReduceScatter, Coll::kAllToAll}) {
    for (size_t n : {size_t{1}, size_t{1031}, size_t{65537}}) {
      const std::string why = runOnDevice(comm, c, strataFloat32, strataSum, n, p - 1, seed++, nullptr);
      if (!why.empty()) {
        ok = false;
        ADD_FAILURE() << collName(c) << " float sum count " << n << " on stream 0: " << why;
      }
    }
  }
  EXPECT_TRUE(allRanksOk(ok));
}

// A stream being captured into a CUDA graph is refused with a message, and the communicator goes
// on working after the capture ends.
TEST_F(DeviceCollectives, CapturingStreamIsRefused) {
  strataComm_t comm = commFor(testShape(), "");
  ASSERT_NE(comm, nullptr);
  cudaStream_t stream = nonBlockingStream();
  const size_t n = 64;
  DeviceBytes x(std::vector<float>(n, 1.0f));
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed), cudaSuccess);
  EXPECT_EQ(strataAllReduce(x.ptr(), x.ptr(), n, strataFloat32, strataSum, comm, stream), strataInvalidUsage);
  EXPECT_NE(std::string(strataGetLastError(comm)).find("captured"), std::string::npos) << strataGetLastError(comm);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  cudaGraphDestroy(graph);
  ASSERT_EQ(strataAllReduce(x.ptr(), x.ptr(), n, strataFloat32, strataSum, comm, stream), strataSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(x.hostAs<float>()[n - 1], static_cast<float>(worldSize()));
  cudaStreamDestroy(stream);
}

// What the CUDA simulator counts for one allreduce of 64 MiB of floats, per rank, against the data
// each rank must at least move, 2(p-1)/p x m (the bus bandwidth factor of allreduce). Only where
// STRATA_TEST_COUNT_BYTES=1 asks for it (it takes seconds on the simulator).
TEST_F(DeviceCollectives, CountedBytesOfALargeAllreduce) {
#if !defined(STRATA_CUDA_SIM)
  GTEST_SKIP() << "the counters are the CUDA simulator's";
#else
  const char* want = std::getenv("STRATA_TEST_COUNT_BYTES");
  if (want == nullptr || std::string(want) != "1") GTEST_SKIP() << "STRATA_TEST_COUNT_BYTES=1 runs it";
  strataComm_t comm = commFor(testShape(), "");
  ASSERT_NE(comm, nullptr);
  const int p = worldSize();
  const size_t n = size_t{16} << 20, m = n * sizeof(float);
  DeviceBytes x(m, 0);
  cudaStream_t stream = nonBlockingStream();
  // A first call sets up the path (slots, staging, scratch); the second is counted.
  ASSERT_EQ(strataAllReduce(x.ptr(), x.ptr(), n, strataFloat32, strataSum, comm, stream), strataSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  MPI_Barrier(MPI_COMM_WORLD);
  cudaSimResetCounters();
  ASSERT_EQ(strataAllReduce(x.ptr(), x.ptr(), n, strataFloat32, strataSum, comm, stream), strataSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  cudaSimCounters c{};
  ASSERT_EQ(cudaSimGetProcessCounters(&c), cudaSuccess);
  const double bound = 2.0 * (p - 1) / p * static_cast<double>(m);
  const double moved = static_cast<double>(c.kernelBytesRead + c.kernelBytesWritten + c.bytesDeviceToDevice +
                                           c.bytesDeviceToHost + c.bytesHostToDevice);
  std::printf("[rank %d] allreduce of %zu MiB fp32 on %d ranks: kernels read %.1f MiB, wrote %.1f MiB in %llu launches; "
              "copies d2d %.1f MiB, d2h %.1f MiB, h2d %.1f MiB; lower bound 2(p-1)/p x m = %.1f MiB; moved / bound = %.2f\n",
              worldRank(), m >> 20, p, c.kernelBytesRead / 1048576.0, c.kernelBytesWritten / 1048576.0,
              c.kernelLaunches, c.bytesDeviceToDevice / 1048576.0, c.bytesDeviceToHost / 1048576.0,
              c.bytesHostToDevice / 1048576.0, bound / 1048576.0, moved / bound);
  // Every rank writes its whole result at least once, and reads at least what the bound says.
  EXPECT_GE(static_cast<double>(c.kernelBytesWritten + c.bytesDeviceToDevice + c.bytesHostToDevice), static_cast<double>(m));
  EXPECT_GE(moved, bound);
  cudaStreamDestroy(stream);
#endif
}

// The single-kernel node collectives on ranks with a GPU each: what the simulator counts in peer
// GPUs' memory per rank (the bytes that cross NVLink) against the bytes each rank must receive,
// for allreduce, reduce-scatter and allgather in fp32 and bf16, counts that are not multiples of 4.
// Above 1 MiB the counted bytes must be within 5% of the bound (the one-shot allreduce, which reads
// every peer's whole message, is chosen below that); at every size they must reach it. Only where
// STRATA_TEST_COUNT_BYTES=1 asks for it.
TEST_F(DeviceCollectives, PeerCollectivesMoveTheLowerBound) {
#if !defined(STRATA_CUDA_SIM)
  GTEST_SKIP() << "the counters are the CUDA simulator's";
#else
  const char* want = std::getenv("STRATA_TEST_COUNT_BYTES");
  if (want == nullptr || std::string(want) != "1") GTEST_SKIP() << "STRATA_TEST_COUNT_BYTES=1 runs it";
  const int p = worldSize();
  if (p < 2) GTEST_SKIP() << "nothing crosses a link on one rank";
  strataComm_t comm = commFor(testShape(), "");
  ASSERT_NE(comm, nullptr);
  cudaStream_t stream = nonBlockingStream();
  const char* maxEnv = std::getenv("STRATA_TEST_COUNT_MAX_BYTES");
  const size_t maxBytes = maxEnv != nullptr ? std::strtoull(maxEnv, nullptr, 10) : size_t{16} << 20;
  bool ok = true;
  for (Coll c : {Coll::kAllReduce, Coll::kReduceScatter, Coll::kAllGather}) {
    for (strataDataType_t t : {strataFloat32, strataBfloat16}) {
      for (size_t bytes = 1024; bytes <= maxBytes; bytes *= 8) {
        const size_t es = typeSize(t);
        // The message (allreduce) or the whole input or output (reduce-scatter, allgather).
        const size_t n = c == Coll::kAllReduce ? bytes / es + 3 : bytes / es / static_cast<size_t>(p) + 3;
        const Layout l = layoutOf(c, n, p, worldRank(), 0);
        DeviceBytes send(l.sendElems * es, 0), recv(l.recvElems * es, 0);
        ASSERT_EQ(call(c, send.ptr(), recv.ptr(), n, t, strataSum, 0, comm, stream), strataSuccess)
            << strataGetLastError(comm);  // sets up, agrees on the call
        ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
        MPI_Barrier(MPI_COMM_WORLD);
        cudaSimResetCounters();
        ASSERT_EQ(call(c, send.ptr(), recv.ptr(), n, t, strataSum, 0, comm, stream), strataSuccess);
        ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
        const std::string algorithm = strataCommLastAlgorithm(comm);
        cudaSimCounters k{};
        ASSERT_EQ(cudaSimGetProcessCounters(&k), cudaSuccess);
        const double m = static_cast<double>(c == Coll::kAllReduce ? n * es : n * es * static_cast<size_t>(p));
        const double factor = c == Coll::kAllReduce ? 2.0 * (p - 1) / p : static_cast<double>(p - 1) / p;
        const double bound = factor * m;
        const double link = static_cast<double>(k.kernelBytesReadPeer + k.kernelBytesWrittenPeer + k.bytesPeerToPeer);
        const double ratio = bound > 0 ? link / bound : 1.0;
        if (worldRank() == 0) {
          std::printf("%-13s %-8s %10.0f B on %d GPUs: %-18s %llu launch(es), link %12.0f B, bound %12.0f B, ratio %.3f, "
                      "local %12.0f B\n",
                      collName(c), typeName(t), m, p, algorithm.c_str(), k.kernelLaunches, link, bound, ratio,
                      static_cast<double>(k.kernelBytesRead + k.kernelBytesWritten) - link);
        }
        bool fine = link >= bound * 0.999 && k.kernelLaunches == 1 && algorithm.rfind("peer_", 0) == 0;
        if (m > 1048576) fine = fine && ratio <= 1.05;
        if (!fine) {
          ok = false;
          std::printf("[rank %d] %s %s %.0f B: %s, %llu launches, link %.0f B, bound %.0f B\n", worldRank(), collName(c),
                      typeName(t), m, algorithm.c_str(), k.kernelLaunches, link, bound);
          ADD_FAILURE() << collName(c) << " " << typeName(t) << " " << m << " B: " << algorithm << ", "
                        << k.kernelLaunches << " launches, link bytes " << link << " against the bound " << bound;
        }
      }
    }
  }
  // A host call whose plan is the communicator's last one, after a peer collective: it names its
  // own algorithm, not the peer collective's.
  std::vector<float> hs(64, 1.0f), hr(64, 0.0f);
  ASSERT_EQ(strataAllReduce(hs.data(), hr.data(), hs.size(), strataFloat32, strataSum, comm, nullptr), strataSuccess);
  DeviceBytes ds(std::vector<float>(64, 1.0f)), dr(std::vector<float>(64, 0.0f));
  ASSERT_EQ(strataAllReduce(ds.ptr(), dr.ptr(), 64, strataFloat32, strataSum, comm, stream), strataSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  ASSERT_EQ(std::string(strataCommLastAlgorithm(comm)).rfind("peer_", 0), 0u) << strataCommLastAlgorithm(comm);
  ASSERT_EQ(strataAllReduce(hs.data(), hr.data(), hs.size(), strataFloat32, strataSum, comm, nullptr), strataSuccess);
  EXPECT_NE(std::string(strataCommLastAlgorithm(comm)).rfind("peer_", 0), 0u)
      << "a host allreduce named " << strataCommLastAlgorithm(comm);
  cudaStreamDestroy(stream);
  EXPECT_TRUE(allRanksOk(ok));
#endif
}

// Staged lanes (virtual nodes, MPI not device-aware): every staged chunk crosses the host link
// once each way and the network once, in chunks (never a whole buffer), and the results are right
// whether a reduction takes its received chunks as they land or after the last one. The timeline
// is strata-perf --phases' (inter_node/staging_pipeline.h).
TEST_F(DeviceCollectives, StagedChunksCrossEachLinkOnce) {
  strataComm_t comm = commFor(testShape(), "");
  ASSERT_NE(comm, nullptr);
  cudaStream_t stream = nonBlockingStream();
  const struct {
    Coll c;
    size_t n;
  } cases[] = {{Coll::kAllReduce, 300007}, {Coll::kReduceScatter, 100003}, {Coll::kAllGather, 70001}};
  double staged = 0, chunkReductions = 0;
  for (const auto& k : cases) {
    PhaseTimes times;
    tools::recordPhases(comm, &times);
    const std::string error = runOnDevice(comm, k.c, strataFloat32, strataSum, k.n, 0, 29, stream);
    tools::recordPhases(comm, nullptr);
    EXPECT_EQ(error, "") << collName(k.c) << " n=" << k.n;
    const StageTimeline& t = times.staging;
    double bytes[StageTimeline::kStages] = {};
    size_t largest = 0;
    for (int st = 0; st < StageTimeline::kStages; ++st) {
      for (const StageTimeline::Interval& iv : t.intervals[st]) {
        bytes[st] += static_cast<double>(iv.bytes);
        if (st != StageTimeline::kReduce) largest = std::max(largest, iv.bytes);
        EXPECT_LE(iv.start, iv.end);
      }
    }
    EXPECT_EQ(bytes[StageTimeline::kToHost] + bytes[StageTimeline::kToDevice], bytes[StageTimeline::kNetwork])
        << collName(k.c) << ": every chunk crosses the host link once and the network once";
    EXPECT_LE(largest, size_t{2} << 20) << collName(k.c) << ": a chunk longer than the pool's slots";
    staged += bytes[StageTimeline::kNetwork];
    chunkReductions += static_cast<double>(t.chunkReductions);
  }
  double all[2] = {staged, chunkReductions}, sum[2];
  MPI_Allreduce(all, sum, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (worldRank() == 0) {
    std::printf("[ staged  ] %.0f bytes over the network, %.0f reductions of landed chunks (all ranks)\n", sum[0],
                sum[1]);
  }
  cudaStreamDestroy(stream);
}

// strataCommAbort with a collective queued that cannot complete (no other rank joins it): the
// caller's stream is released, within the bound, instead of waiting forever.
TEST_F(DeviceCollectives, AbortWithWorkPendingReleasesTheStream) {
  if (worldSize() < 2) GTEST_SKIP() << "needs ranks that do not join the collective";
  strataConfig_t config = STRATA_CONFIG_INITIALIZER;
  config.timeoutSeconds = 60;
  strataComm_t comm = nullptr;
  ASSERT_EQ(strataCommInitMpi(&comm, MPI_COMM_WORLD, &config), strataSuccess);
  cudaStream_t stream = nonBlockingStream();
  const size_t n = 4096;
  DeviceBytes x(std::vector<float>(n, 1.0f));
  // Every rank builds (and agrees on) the plan first, so rank 0's second call is only queued.
  ASSERT_EQ(strataAllReduce(x.ptr(), x.ptr(), n, strataFloat32, strataSum, comm, stream), strataSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  // The synchronous path (STRATA_DEVICE_SYNC=1, MPI below MPI_THREAD_MULTIPLE) runs a call before it returns.
  if (!allRanksOk(tools::deviceCallsQueued(comm))) {
    cudaStreamDestroy(stream);
    strataCommDestroy(comm);
    GTEST_SKIP() << "device calls run on the calling thread here: nothing is left pending to abort";
  }
  if (worldRank() == 0) {
    ASSERT_EQ(strataAllReduce(x.ptr(), x.ptr(), n, strataFloat32, strataSum, comm, stream), strataSuccess);
    EXPECT_EQ(cudaStreamQuery(stream), cudaErrorNotReady) << "the stream waits for the queued collective";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(strataCommAbort(comm), strataSuccess) << strataGetLastError(nullptr);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess) << "abort releases the stream";
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(waited, 30.0) << "released within the communicator's bound, not by its timeout";
  cudaStreamDestroy(stream);
  MPI_Barrier(MPI_COMM_WORLD);
}

// A staged call that rank 0 never joins: every other rank times out (the communicator's bound), or
// hears from the first that did (src/core/peer_notices.h) and ends then, and its message says where
// its own staged chunks stopped (StagingPipeline::describe): rank 1, rank 0's
// neighbour in the ring, waits for chunks from rank 0, and its message does not offer the cause of
// a stalled device (its device work is done); the last rank names its chunk to rank 0 on the wire. Virtual nodes and an MPI that is not
// device-aware, so every message of the flat ring is staged through host slots.
TEST_F(DeviceCollectives, AStalledStagedCallSaysWhereItsChunksAre) {
  if (testShape() == "0") GTEST_SKIP() << "needs virtual nodes: on the one node MPI discovers nothing is staged";
  if (worldSize() < 2) GTEST_SKIP() << "needs a rank that does not join the collective";
  setenv("STRATA_RANKS_PER_NODE", testShape().c_str(), 1);
  strataConfig_t config = STRATA_CONFIG_INITIALIZER;
  config.algorithm = "ring";
  config.timeoutSeconds = 5;
  config.cudaAwareMpi = 0;  // staged, whatever the MPI
  strataComm_t comm = nullptr;
  const strataResult_t made = strataCommInitMpi(&comm, MPI_COMM_WORLD, &config);
  unsetenv("STRATA_RANKS_PER_NODE");
  ASSERT_EQ(made, strataSuccess) << strataGetLastError(nullptr);
  cudaStream_t stream = nonBlockingStream();
  const size_t n = 16384;  // 64 KiB a rank: many chunks of the tests' 4 KiB slots
  const int p = worldSize(), me = worldRank();
  DeviceBytes send(std::vector<float>(n, 1.0f)), recv(std::vector<float>(n * static_cast<size_t>(p), 0.0f));
  // A call every rank joins first: the plan is agreed everywhere, so the second call's stall is in
  // its staged messages.
  ASSERT_EQ(strataAllGather(send.ptr(), recv.ptr(), n, strataFloat32, comm, stream), strataSuccess)
      << strataGetLastError(comm);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  if (me != 0) {
    strataResult_t rc = strataAllGather(send.ptr(), recv.ptr(), n, strataFloat32, comm, stream);
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess) << "the stream is released at the bound";
    // Queued for the progress thread, the call returned at once: the next call reports its error.
    if (rc == strataSuccess) rc = strataAllGather(send.ptr(), recv.ptr(), n, strataFloat32, comm, stream);
    const std::string error = strataGetLastError(comm);
    EXPECT_TRUE(rc == strataTimeout || (rc == strataRemoteError && error.find("timed out after") != std::string::npos))
        << error;
    EXPECT_NE(error.find("; staging: "), std::string::npos) << "rank " << me << ": " << error;
    if (me == 1) {
      std::printf("[ stalled ] rank 1: %s\n", error.c_str());
      EXPECT_NE(error.find("receives waiting for chunks from rank 0 tag"), std::string::npos)
          << "rank 1 receives from rank 0 first: " << error;
      EXPECT_EQ(error.find("CUDA_DEVICE_MAX_CONNECTIONS"), std::string::npos)
          << "rank 1 waits on MPI, not on its device: the held-stream cause is not its: " << error;
    }
    if (me == p - 1) {
      // Rank 0's other neighbour: its first chunk to rank 0 is never taken (unless its MPI sent the
      // chunks eagerly, so none is left on the wire), and the message names it.
      std::printf("[ stalled ] rank %d: %s\n", me, error.c_str());
      EXPECT_TRUE(error.find("on the wire: to rank 0 tag 0 (chunk 0 of ") != std::string::npos ||
                  error.find(" 0 chunk(s) sent and not yet taken") != std::string::npos)
          << "rank " << me << " sends to rank 0 first: " << error;
    }
  }
  // Rank 0 aborts only once the others timed out: its abort tells them, which would end their wait.
  MPI_Barrier(MPI_COMM_WORLD);
  strataCommAbort(comm);
  cudaStreamDestroy(stream);
  MPI_Barrier(MPI_COMM_WORLD);
}

// One rank's argument error on device buffers, its peers' calls valid: it returns the error at once
// and tells its peers (src/core/peer_notices.h), whose calls end then, not at the communicator's
// 60 s bound, whether they run on the calling thread (which returns strataRemoteError) or are
// queued for the progress thread (which hears the notice in its wait, releases the caller's stream,
// and leaves the error to the next call). The refusing rank's next call hears that its peers'
// call failed. In the node shape under test.
TEST_F(DeviceCollectives, OneRanksArgumentErrorEndsItsPeersDeviceCallsAtOnce) {
  const int p = worldSize(), me = worldRank(), refuser = p - 1;
  if (p < 2) GTEST_SKIP() << "needs a peer";
  AgreedComm a;  // the second call's peers are under way when its refusal arrives
  ASSERT_EQ(a.error, "");
  const auto start = std::chrono::steady_clock::now();
  const strataResult_t second = a.allReduce(me == refuser ? static_cast<strataRedOp_t>(9) : strataSum);
  const std::string why = strataGetLastError(a.comm);
  EXPECT_EQ(cudaStreamSynchronize(a.stream), cudaSuccess) << "the caller's stream is released";
  // Before the next call, strataCommGetAsyncError knows: the peers' call failed (on this thread,
  // queued, or in a peer kernel the refusal stopped); on the refusing rank nothing failed yet, or
  // the query heard its peers' answers already.
  if (me == refuser) {
    strataResult_t async = strataInternalError;
    EXPECT_EQ(strataCommGetAsyncError(a.comm, &async), strataSuccess);
    EXPECT_TRUE(async == strataSuccess || async == strataRemoteError)
        << strataGetErrorString(async) << ": " << strataGetLastError(a.comm);
  } else {
    const strataResult_t async = awaitAsyncError(a.comm, 20.0);
    const std::string whyAsync = strataGetLastError(a.comm);
    EXPECT_EQ(async, strataRemoteError) << strataGetErrorString(async) << ": " << whyAsync;
    EXPECT_NE(whyAsync.find("refused"), std::string::npos) << whyAsync;
  }
  const strataResult_t third = a.allReduce(strataSum);
  const std::string whyThird = strataGetLastError(a.comm);
  EXPECT_EQ(cudaStreamSynchronize(a.stream), cudaSuccess);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (me == refuser) {
    EXPECT_EQ(second, strataInvalidArgument) << why;
    EXPECT_NE(why.find("invalid reduction op 9"), std::string::npos) << why;
    // Its peers failed in call #2, or (a peer kernel of call #2 queued and stopped) at their next.
    EXPECT_EQ(third, strataRemoteError) << whyThird;
    EXPECT_NE(whyThird.find("communicator failed in call #"), std::string::npos) << whyThird;
    EXPECT_NE(whyThird.find("refused call #2"), std::string::npos) << whyThird;
  } else {
    // The first error reported (the call itself where it ran on this thread, else the next call)
    // names the refusing rank, the call and its error.
    EXPECT_TRUE(second == strataRemoteError || second == strataSuccess) << strataGetErrorString(second) << ": " << why;
    EXPECT_EQ(third, strataRemoteError) << whyThird;
    const std::string& first = second == strataRemoteError ? why : whyThird;
    EXPECT_NE(first.find("rank " + std::to_string(refuser) + " refused call #2"), std::string::npos) << first;
    EXPECT_NE(first.find("invalid reduction op 9"), std::string::npos) << first;
  }
  EXPECT_LT(seconds, 20.0) << "the calls must end with the notices, not the 60 s bound";
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(strataCommDestroy(a.comm), strataSuccess);
}

// A peer collective kernel waiting for members that abort their communicator returns (their stop
// records) instead of waiting out its 60 s bound and trapping: its stream completes, without a
// CUDA error. Rank 0 queues a call the others never make; they abort.
TEST_F(DeviceCollectives, APeerKernelStopsWaitingForMembersThatAbort) {
  const int p = worldSize(), me = worldRank();
  if (p < 2) GTEST_SKIP() << "needs a peer";
  AgreedComm a;
  ASSERT_EQ(a.error, "");
  if (!a.peerKernels()) {
    strataCommDestroy(a.comm);
    GTEST_SKIP() << "no peer collective kernels here (the node's ranks do not each have a GPU)";
  }
  // Queued on rank 0's stream: the kernel waits for the others' kernels, which never come.
  if (me == 0) ASSERT_EQ(a.allReduce(strataSum), strataSuccess) << strataGetLastError(a.comm);
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = std::chrono::steady_clock::now();
  if (me != 0) EXPECT_EQ(strataCommAbort(a.comm), strataSuccess) << strataGetLastError(nullptr);
  if (me == 0) {
    EXPECT_EQ(cudaStreamSynchronize(a.stream), cudaSuccess) << "the kernel returns, without trapping";
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, 20.0) << "the kernel must stop with the aborting ranks, not at the 60 s bound";
    // The stopped kernel is an error outside any call, which the query reports before the next one.
    strataResult_t async = strataSuccess;
    EXPECT_EQ(strataCommGetAsyncError(a.comm, &async), strataSuccess);
    EXPECT_EQ(async, strataRemoteError) << strataGetErrorString(async);
    EXPECT_NE(std::string(strataGetLastError(a.comm)).find("a peer collective kernel stopped"), std::string::npos)
        << strataGetLastError(a.comm);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) EXPECT_EQ(strataCommAbort(a.comm), strataSuccess) << strataGetLastError(nullptr);
  MPI_Barrier(MPI_COMM_WORLD);
}

// A queued call that fails on the progress thread stops its peers' peer collective kernels too (its
// stop records, as a call failing on the calling thread writes them), so they do not wait out their
// bound and trap. Ranks with a GPU each, on one node: rank 0, bounded at 2 s, makes a gather (a plan,
// queued for the progress thread) while the others make an allreduce whose peer kernel, bounded at
// 60 s, waits for rank 0's kernel.
TEST_F(DeviceCollectives, AQueuedCallsFailureStopsItsPeersKernels) {
  const int p = worldSize(), me = worldRank();
  if (p < 2) GTEST_SKIP() << "needs a peer";
  AgreedComm a(me == 0 ? 2.0 : 60.0);
  ASSERT_TRUE(allRanksOk(a.error.empty())) << a.error;
  if (!a.peerKernels()) {
    strataCommDestroy(a.comm);
    GTEST_SKIP() << "no peer collective kernels here (the node's ranks do not each have a GPU)";
  }
  DeviceBytes all(std::vector<float>(AgreedComm::n * static_cast<size_t>(p), 0.0f));
  auto gather = [&] { return strataGather(a.x.ptr(), all.ptr(), AgreedComm::n, strataFloat32, 0, a.comm, a.stream); };
  // Every rank agrees on the gather's plan first, which runs queued, not as a peer kernel.
  tools::PeerCallInfo info;
  const bool gathered = gather() == strataSuccess && cudaStreamSynchronize(a.stream) == cudaSuccess;
  ASSERT_TRUE(allRanksOk(gathered && tools::deviceCallsQueued(a.comm) && !tools::lastPeerCall(a.comm, &info)))
      << strataGetLastError(a.comm);
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(me == 0 ? gather() : a.allReduce(strataSum), strataSuccess) << strataGetLastError(a.comm);
  EXPECT_EQ(cudaStreamSynchronize(a.stream), cudaSuccess) << "released, and no kernel trapped";
  const strataResult_t async = awaitAsyncError(a.comm, 30.0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(async, me == 0 ? strataTimeout : strataRemoteError) << strataGetLastError(a.comm);
  if (me != 0) {
    EXPECT_NE(std::string(strataGetLastError(a.comm)).find("a peer collective kernel stopped"), std::string::npos)
        << strataGetLastError(a.comm);
    EXPECT_LT(seconds, 20.0) << "the kernel must stop with rank 0's failure, not at its 60 s bound";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(strataCommAbort(a.comm), strataSuccess) << strataGetLastError(nullptr);
  MPI_Barrier(MPI_COMM_WORLD);
}

// strataCommGetAsyncError polled on another thread from the communicator's creation on: across its
// first device call (which sets up the device path the query reads), its calls, and its abort, it
// reports success, then the abort under way (or a peer's, heard first), then that the communicator
// is gone.
TEST_F(DeviceCollectives, TheAsyncErrorQueryRacesTheFirstDeviceCallAndAnAbort) {
  const int p = worldSize();
  // A communicator of its own (commFor's are shared by the tests), in the shape under test.
  if (testShape() != "0") setenv("STRATA_RANKS_PER_NODE", testShape().c_str(), 1);
  strataComm_t comm = nullptr;
  const strataResult_t made = strataCommInitMpi(&comm, MPI_COMM_WORLD, nullptr);
  unsetenv("STRATA_RANKS_PER_NODE");
  ASSERT_EQ(made, strataSuccess) << strataGetLastError(nullptr);
  std::atomic<bool> go{false}, aborting{false};
  std::string wrong;
  std::thread poller([&] {
    strataResult_t e = strataSuccess;
    go.store(true);
    while (strataCommGetAsyncError(comm, &e) == strataSuccess) {
      // The abort under way, or once the ranks abort, a peer's abort heard first.
      const bool expected = e == strataSuccess || e == strataInvalidUsage || (aborting.load() && e == strataRemoteError);
      if (!expected && wrong.empty()) wrong = strataGetErrorString(e);
    }
  });
  while (!go.load()) std::this_thread::yield();
  cudaStream_t stream = nonBlockingStream();
  DeviceBytes x(std::vector<float>(1024, 1.0f));
  bool ok = true;
  for (int i = 0; i < 3; ++i) {
    ok = ok && strataAllReduce(x.ptr(), x.ptr(), 1024, strataFloat32, strataSum, comm, stream) == strataSuccess;
  }
  ok = ok && cudaStreamSynchronize(stream) == cudaSuccess;
  EXPECT_TRUE(ok) << strataGetLastError(comm);
  EXPECT_EQ(x.hostAs<float>().front(), static_cast<float>(p * p * p));
  aborting.store(true);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(strataCommAbort(comm), strataSuccess) << strataGetLastError(nullptr);
  poller.join();
  EXPECT_EQ(wrong, "") << "the query reported an error no call had";
  cudaStreamDestroy(stream);
  MPI_Barrier(MPI_COMM_WORLD);
}

// A watchdog thread polls strataCommGetAsyncError while the caller's thread goes on, and aborts the
// communicator when it reports an error, as ML frameworks watch NCCL's. Rank 0 makes a call its
// peers never make, bounded at 2 s: queued, the progress thread's wait times out and releases the
// caller's stream; on the calling thread, the call returns the timeout. Either way the watchdog
// sees strataTimeout, its abort succeeds, and the stream completes, seconds before a 60 s bound would.
// Not where the ranks run peer kernels, whose wait out of their bound traps (the test above).
TEST_F(DeviceCollectives, AWatchdogThreadHearsAFailedCallAndAborts) {
  const int p = worldSize(), me = worldRank();
  if (p < 2) GTEST_SKIP() << "needs a peer";
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  if (level != MPI_THREAD_MULTIPLE) GTEST_SKIP() << "a watchdog thread's abort needs MPI_THREAD_MULTIPLE";
  AgreedComm a(2.0);
  ASSERT_TRUE(allRanksOk(a.error.empty())) << a.error;  // every rank stops here alike
  if (a.peerKernels()) {
    strataCommDestroy(a.comm);
    GTEST_SKIP() << "peer collective kernels here: a kernel that waits out its bound traps";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) {
    const auto start = std::chrono::steady_clock::now();
    strataResult_t seen = strataSuccess, aborted = strataInternalError;
    std::thread watchdog([&] {
      seen = awaitAsyncError(a.comm, 30.0);
      if (seen != strataSuccess) aborted = strataCommAbort(a.comm);
    });
    const strataResult_t call = a.allReduce(strataSum);
    EXPECT_TRUE(call == strataSuccess || call == strataTimeout) << strataGetErrorString(call);
    EXPECT_EQ(cudaStreamSynchronize(a.stream), cudaSuccess) << "the stream is released";
    watchdog.join();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(seen, strataTimeout) << strataGetErrorString(seen);
    EXPECT_EQ(aborted, strataSuccess) << strataGetLastError(nullptr);
    EXPECT_LT(seconds, 20.0);
    strataResult_t after = strataSuccess;
    EXPECT_EQ(strataCommGetAsyncError(a.comm, &after), strataInvalidArgument) << "the abort freed it";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (me != 0) EXPECT_EQ(strataCommAbort(a.comm), strataSuccess) << strataGetLastError(nullptr);
  MPI_Barrier(MPI_COMM_WORLD);
}

// Where ranks share a GPU, device calls run on the calling thread unless STRATA_DEVICE_SYNC=0 forces
// the progress thread (src/core/device_mode.h says why); where each rank has its own GPU they are
// queued for it. One discovered node, CUDA's and Strata's mode settings unset, MPI_THREAD_MULTIPLE;
// rank r runs on device r mod count.
TEST_F(DeviceCollectives, DeviceCallsRunSynchronouslyWhereRanksShareAGpu) {
  if (testShape() != "0") GTEST_SKIP() << "needs the one node MPI discovers";
  for (const char* v : {"STRATA_DEVICE_SYNC", "CUDA_LAUNCH_BLOCKING", "CUDA_DEVICE_MAX_CONNECTIONS"}) {
    if (std::getenv(v) != nullptr) GTEST_SKIP() << v << " is set";
  }
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  if (level != MPI_THREAD_MULTIPLE) GTEST_SKIP() << "the progress thread needs MPI_THREAD_MULTIPLE";
  int devices = 0;
  ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
  const bool shared = worldSize() > devices;
  strataComm_t comm = commFor(testShape(), "");
  ASSERT_NE(comm, nullptr);
  cudaStream_t stream = nonBlockingStream();
  DeviceBytes x(std::vector<float>(1024, 1.0f));
  ASSERT_EQ(strataAllReduce(x.ptr(), x.ptr(), 1024, strataFloat32, strataSum, comm, stream), strataSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(tools::deviceCallsQueued(comm), !shared)
      << worldSize() << " ranks on " << devices << " device(s): calls " << (shared ? "should run" : "should be queued");
  const std::vector<float> got = x.hostAs<float>();
  EXPECT_EQ(got.front(), static_cast<float>(worldSize()));
  cudaStreamDestroy(stream);
  MPI_Barrier(MPI_COMM_WORLD);
}

// Shared hardware queues (CUDA_DEVICE_MAX_CONNECTIONS=N, more streams than N): a caller's stream
// that shares a queue with the progress thread's stalls it behind the held wait (README, "Stream
// order", known limitation). What the library promises there: no hang. The progress thread's wait
// is bounded, the stream is released at the timeout, and the next call reports strataTimeout with
// the cause named (on a rank whose own device work stalled; a rank that waited on such a peer names
// the peer). Which streams share a queue is the simulator's rule (stream k feeds queue
// k mod N), so the test runs there, under the variable (ctest: gpu_collectives_shared_queues_np2).
TEST_F(DeviceCollectives, AStreamSharingAHardwareQueueTimesOutWithItsCause) {
#if !defined(STRATA_CUDA_SIM)
  GTEST_SKIP() << "which streams share a hardware queue is the simulator's rule";
#endif
  const char* connections = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  const int n = connections != nullptr ? std::atoi(connections) : 0;
  if (n < 2) GTEST_SKIP() << "needs CUDA_DEVICE_MAX_CONNECTIONS of 2 or more";
  if (worldSize() < 2) GTEST_SKIP() << "needs a collective that waits for another rank";
  strataConfig_t config = STRATA_CONFIG_INITIALIZER;
  config.timeoutSeconds = 3;
  strataComm_t comm = nullptr;
  ASSERT_EQ(strataCommInitMpi(&comm, MPI_COMM_WORLD, &config), strataSuccess);
  // Streams made before the path's own: of any n + 1 in a row, one shares each queue.
  std::vector<cudaStream_t> streams(static_cast<size_t>(n) + 1);
  for (auto& s : streams) ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  DeviceBytes x(std::vector<float>(4096, 1.0f));
  strataResult_t rc = strataSuccess;
  std::string error;
  for (size_t i = 0; i < streams.size() && rc == strataSuccess; ++i) {
    rc = strataAllReduce(x.ptr(), x.ptr(), 4096, strataFloat32, strataSum, comm, streams[i]);
    if (rc != strataSuccess) {
      error = strataGetLastError(comm);
      break;
    }
    if (i == 0 && !allRanksOk(tools::deviceCallsQueued(comm))) GTEST_SKIP() << "device calls run on the calling thread";
    const auto start = std::chrono::steady_clock::now();
    ASSERT_EQ(cudaStreamSynchronize(streams[i]), cudaSuccess) << "the stream is released";
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(waited, 3.0 + 20.0) << "released at the communicator's bound";
  }
  EXPECT_EQ(rc, strataTimeout) << "CUDA_DEVICE_MAX_CONNECTIONS=" << n << ", " << streams.size()
                               << " streams: one sharing the progress thread's queue stalls it: " << error;
  // The cause is named where the rank's own device work stalled; a rank whose device work finished
  // first times out waiting for the stalled peer, and names that peer instead. At least one rank
  // stalled on its own device.
  const bool named = error.find("CUDA_DEVICE_MAX_CONNECTIONS") != std::string::npos &&
                     error.find("STRATA_DEVICE_SYNC=1") != std::string::npos;
  const bool namesPeer = error.find("(rank ") != std::string::npos || error.find("from rank ") != std::string::npos ||
                         error.find("to rank ") != std::string::npos;
  if (!named) EXPECT_TRUE(namesPeer) << "waits on a peer, and names it: " << error;
  int mine = named ? 1 : 0, any = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(any, 1) << "no rank named the shared hardware queue: " << error;
  strataCommAbort(comm);
  for (auto& s : streams) cudaStreamDestroy(s);
  MPI_Barrier(MPI_COMM_WORLD);
}

// STRATA_STREAM_GATE=value where the driver refuses the wait-value operation
// (CUDA_SIM_STREAM_MEM_OPS=0): the first device call fails at the path's setup with the cause named,
// before anything is queued, and leaves the buffer as it was.
TEST_F(DeviceCollectives, AForcedGateTheDriverRefusesFailsAtSetup) {
  const char* gate = std::getenv("STRATA_STREAM_GATE");
  const char* memOps = std::getenv("CUDA_SIM_STREAM_MEM_OPS");
  if (gate == nullptr || std::strcmp(gate, "value") != 0 || memOps == nullptr || std::strcmp(memOps, "0") != 0) {
    GTEST_SKIP() << "needs STRATA_STREAM_GATE=value and CUDA_SIM_STREAM_MEM_OPS=0";
  }
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  if (level != MPI_THREAD_MULTIPLE) GTEST_SKIP() << "device calls run on the calling thread: no stream is held";
  strataComm_t comm = commFor(testShape(), "");
  cudaStream_t stream = nonBlockingStream();
  const size_t n = 1000;
  DeviceBytes x(std::vector<float>(n, 1.0f));
  const strataResult_t rc = strataAllReduce(x.ptr(), x.ptr(), n, strataFloat32, strataSum, comm, stream);
  EXPECT_EQ(rc, strataInvalidUsage);
  EXPECT_NE(std::string(strataGetLastError(comm)).find("STRATA_STREAM_GATE=value"), std::string::npos)
      << strataGetLastError(comm);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  const std::vector<unsigned char> got = x.host();
  std::vector<float> values(n);
  std::memcpy(values.data(), got.data(), n * sizeof(float));
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(values[i], 1.0f) << "element " << i << ": nothing ran";
  cudaStreamDestroy(stream);
}

TEST_F(DeviceCollectives, MixedHostAndDeviceBuffersAreRejected) {
  strataComm_t comm = commFor(testShape(), "");
  DeviceBytes d(std::vector<float>(16, 1.0f));
  std::vector<float> h(16, 0.0f);
  EXPECT_EQ(strataAllReduce(d.ptr(), h.data(), 16, strataFloat32, strataSum, comm, nullptr),
            strataInvalidArgument);
  EXPECT_NE(std::string(strataGetLastError(comm)).find("device memory but recvbuff is host"), std::string::npos)
      << strataGetLastError(comm);
}

// A broadcast's sendbuff is not significant off the root (as in NCCL): a non-root passing a host
// pointer there runs on its receive buffer's device, with the others.
TEST_F(DeviceCollectives, ANonRootsUnusedSendBufferDoesNotChooseItsDevice) {
  strataComm_t comm = commFor(testShape(), "");
  ASSERT_NE(comm, nullptr);
  cudaStream_t stream = nonBlockingStream();
  const size_t n = 1031;
  const int root = worldSize() - 1;
  DeviceBytes send(std::vector<float>(n, 3.0f)), recv(std::vector<float>(n, 0.0f));
  std::vector<float> notUsed(1, -1.0f);
  const void* sendbuff = worldRank() == root ? static_cast<const void*>(send.ptr()) : notUsed.data();
  ASSERT_EQ(strataBroadcast(sendbuff, recv.ptr(), n, strataFloat32, root, comm, stream), strataSuccess)
      << strataGetLastError(comm);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  const std::vector<float> got = recv.hostAs<float>();
  EXPECT_EQ(got[0], 3.0f);
  EXPECT_EQ(got[n - 1], 3.0f);
  EXPECT_EQ(notUsed[0], -1.0f);
  cudaStreamDestroy(stream);
}

// Managed memory (cudaMallocManaged) is device memory to Strata: the call is queued on the stream
// and takes the device path, alone or beside a cudaMalloc buffer, and the host reads the result
// once the stream is done. On the rank's own device (rank r on device r mod count).
TEST_F(DeviceCollectives, ManagedBuffersTakeTheDevicePath) {
  strataComm_t comm = commFor(testShape(), "");
  ASSERT_NE(comm, nullptr);
  cudaStream_t stream = nonBlockingStream();
  const int p = worldSize(), me = worldRank();
  const size_t n = 5003;
  float *send = nullptr, *recv = nullptr;
  ASSERT_EQ(cudaMallocManaged(&send, n * sizeof(float), cudaMemAttachGlobal), cudaSuccess);
  ASSERT_EQ(cudaMallocManaged(&recv, n * static_cast<size_t>(p) * sizeof(float), cudaMemAttachGlobal), cudaSuccess);
  for (size_t i = 0; i < n; ++i) send[i] = static_cast<float>(me + 1) + static_cast<float>(i % 7);
  ASSERT_EQ(strataAllReduce(send, recv, n, strataFloat32, strataSum, comm, stream), strataSuccess)
      << strataGetLastError(comm);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  bool ok = true;
  for (size_t i = 0; i < n && ok; ++i) {
    const float want = static_cast<float>(p * (p + 1) / 2) + static_cast<float>(p) * static_cast<float>(i % 7);
    if (recv[i] != want) {
      ok = false;
      ADD_FAILURE() << "managed allreduce element " << i << ": " << recv[i] << " vs " << want;
    }
  }
  // Managed beside cudaMalloc memory: one memory space, so one call.
  DeviceBytes gathered(std::vector<float>(n * static_cast<size_t>(p), 0.0f));
  ASSERT_EQ(strataAllGather(send, gathered.ptr(), n, strataFloat32, comm, stream), strataSuccess)
      << strataGetLastError(comm);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  const std::vector<float> all = gathered.hostAs<float>();
  for (int r = 0; r < p && ok; ++r) {
    const float want = static_cast<float>(r + 1) + static_cast<float>((n - 1) % 7);
    if (all[static_cast<size_t>(r) * n + n - 1] != want) {
      ok = false;
      ADD_FAILURE() << "allgather from managed memory, block " << r << ": " << all[static_cast<size_t>(r) * n + n - 1];
    }
  }
  // Managed beside host memory is two spaces: refused, as device beside host is.
  std::vector<float> h(n, 0.0f);
  EXPECT_EQ(strataAllReduce(send, h.data(), n, strataFloat32, strataSum, comm, nullptr), strataInvalidArgument);
  EXPECT_TRUE(allRanksOk(ok));
  cudaFree(send);
  cudaFree(recv);
  cudaStreamDestroy(stream);
}

// Rank 0 passes device buffers, the others host buffers, for the same call: each rank would run a
// plan priced and chunked for its own memory space. Every rank refuses it, and the communicator
// stays usable for a consistent call afterwards.
TEST_F(DeviceCollectives, HostOnSomeRanksDeviceOnOthersIsRefused) {
  if (worldSize() < 2) GTEST_SKIP() << "needs two ranks";
  strataComm_t comm = commFor(testShape(), "");
  const size_t n = 1000;
  DeviceBytes d(std::vector<float>(n, 1.0f));
  std::vector<float> h(n, 1.0f);
  float* buf = worldRank() == 0 ? reinterpret_cast<float*>(d.ptr()) : h.data();
  EXPECT_EQ(strataAllReduce(buf, buf, n, strataFloat32, strataSum, comm, nullptr), strataInvalidUsage);
  const std::string error = strataGetLastError(comm);
  EXPECT_NE(error.find("every rank of a call must use the same memory space"), std::string::npos) << error;
  EXPECT_NE(error.find(worldRank() == 0 ? "passed host buffers" : "passed device buffers"), std::string::npos)
      << error;
  // The same call in one memory space then runs.
  ASSERT_EQ(strataAllReduce(h.data(), h.data(), n, strataFloat32, strataSum, comm, nullptr), strataSuccess)
      << strataGetLastError(comm);
  EXPECT_EQ(h[n - 1], static_cast<float>(worldSize()));
}

}  // namespace
}  // namespace strata::test
