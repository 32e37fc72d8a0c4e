// Tier 2: every implemented collective x every algorithm x node shape, and inside each test every
// type x op x count (0, 1, p-1, p+1, primes, 1 MiB + 3) x in place x root, on host memory, checked
// bit for bit against the oracle every rank computes from the seeded inputs. Guard zones catch
// writes out of bounds; buffers a rank must not write are checked untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>
#include <thread>

#include "hierarchy/composition.h"
#include "inter_node/algorithms/algorithm.h"
#include "src/core/config.h"
#include "src/tuning/tuner.h"
#include "tests/mpi/mpi_test_util.h"

namespace strata::test {
namespace {

struct CallCase {
  Collective coll;
  strataDataType_t type;
  strataRedOp_t op;
  size_t count;
  bool inPlace;
  int root;
  unsigned seed;
};

std::string describe(const CallCase& c, const std::string& algo, const std::string& shape, int p) {
  std::ostringstream os;
  os << collectiveName(c.coll) << " algorithm=" << (algo.empty() ? "auto" : algo) << " type=" << typeName(c.type)
     << " op=" << opName(c.op) << " count=" << c.count << " ranks=" << p << " shape=" << shape
     << " inPlace=" << c.inPlace << " root=" << c.root << " mem=" << (testOnDevice() ? "device" : "host");
  return os.str();
}

// Runs one call on `comm` and checks this rank's result. Returns "" or what went wrong.
std::string runAndCheck(strataComm_t comm, const CallCase& c) {
  const int p = worldSize(), me = worldRank();
  const size_t es = typeSize(c.type), n = c.count, np = n * static_cast<size_t>(p);
  const bool isRoot = me == c.root;
  strataResult_t rc = strataSuccess;
  std::string err;
  auto check = [&](const void* got, const void* want, size_t elems, const char* what) {
    const std::string diff = compareElements(c.type, got, want, elems);
    if (!diff.empty() && err.empty()) err = std::string(what) + ": " + diff;
  };
  auto guards = [&](const GuardedBuffer& b, const char* what) {
    if (!b.guardsIntact() && err.empty()) err = std::string("wrote outside ") + what;
  };

  switch (c.coll) {
    case Collective::kAllReduce: {
      GuardedBuffer send(n * es), recv(n * es);
      std::vector<unsigned char> want(n * es), input(n * es);
      fillInput(c.type, c.op, me, input.data(), 0, n, c.seed);
      fillReduced(c.type, c.op, p, want.data(), 0, n, c.seed);
      if (c.inPlace) {
        copyBytes(recv.data(), input.data(), n * es);
        rc = onDevice({&send, &recv}, [&](const Translate& X, cudaStream_t st) {
          return strataAllReduce(X(recv.data()), X(recv.data()), n, c.type, c.op, comm, st);
        });
      } else {
        copyBytes(send.data(), input.data(), n * es);
        rc = onDevice({&send, &recv}, [&](const Translate& X, cudaStream_t st) {
          return strataAllReduce(X(send.data()), X(recv.data()), n, c.type, c.op, comm, st);
        });
        check(send.data(), input.data(), n, "send buffer changed");
      }
      if (rc == strataSuccess) check(recv.data(), want.data(), n, "recvbuff");
      guards(send, "sendbuff");
      guards(recv, "recvbuff");
      break;
    }
    case Collective::kBroadcast: {
      GuardedBuffer send(n * es), recv(n * es);
      std::vector<unsigned char> want(n * es);
      fillInput(c.type, c.op, c.root, want.data(), 0, n, c.seed);
      if (c.inPlace) {
        if (isRoot) copyBytes(recv.data(), want.data(), n * es);
        rc = onDevice({&send, &recv}, [&](const Translate& X, cudaStream_t st) {
          return strataBroadcast(X(recv.data()), X(recv.data()), n, c.type, c.root, comm, st);
        });
      } else {
        if (isRoot) copyBytes(send.data(), want.data(), n * es);
        // Non-roots pass no send buffer: it must not be read.
        rc = onDevice({&send, &recv}, [&](const Translate& X, cudaStream_t st) {
          return strataBroadcast(X(isRoot ? send.data() : nullptr), X(recv.data()), n, c.type, c.root, comm, st);
        });
      }
      if (rc == strataSuccess) check(recv.data(), want.data(), n, "recvbuff");
      guards(send, "sendbuff");
      guards(recv, "recvbuff");
      break;
    }
    case Collective::kReduce: {
      GuardedBuffer send(n * es), recv(n * es, 0xEE);
      std::vector<unsigned char> want(n * es), input(n * es), untouched(n * es, 0xEE);
      fillInput(c.type, c.op, me, input.data(), 0, n, c.seed);
      fillReduced(c.type, c.op, p, want.data(), 0, n, c.seed);
      if (c.inPlace) {
        copyBytes(recv.data(), input.data(), n * es);
        rc = onDevice({&send, &recv}, [&](const Translate& X, cudaStream_t st) {
          return strataReduce(X(recv.data()), X(recv.data()), n, c.type, c.op, c.root, comm, st);
        });
        if (rc == strataSuccess) check(recv.data(), isRoot ? want.data() : input.data(), n, isRoot ? "recvbuff" : "non-root buffer");
      } else {
        copyBytes(send.data(), input.data(), n * es);
        rc = onDevice({&send, &recv}, [&](const Translate& X, cudaStream_t st) {
          return strataReduce(X(send.data()), X(recv.data()), n, c.type, c.op, c.root, comm, st);
        });
        if (rc == strataSuccess) check(recv.data(), isRoot ? want.data() : untouched.data(), n, isRoot ? "recvbuff" : "non-root recvbuff written");
        check(send.data(), input.data(), n, "send buffer changed");
      }
      guards(send, "sendbuff");
      guards(recv, "recvbuff");
      break;
    }
    case Collective::kAllGather: {
      GuardedBuffer send(n * es), recv(np * es);
      std::vector<unsigned char> want(np * es);
      for (int r = 0; r < p; ++r) fillInput(c.type, c.op, r, want.data() + static_cast<size_t>(r) * n * es, 0, n, c.seed);
      char* mine = static_cast<char*>(recv.data()) + static_cast<size_t>(me) * n * es;
      if (c.inPlace) {
        fillInput(c.type, c.op, me, mine, 0, n, c.seed);
        rc = onDevice({&send, &recv}, [&](const Translate& X, cudaStream_t st) {
          return strataAllGather(X(mine), X(recv.data()), n, c.type, comm, st);
        });
      } else {
        fillInput(c.type, c.op, me, send.data(), 0, n, c.seed);
        rc = onDevice({&send, &recv}, [&](const Translate& X, cudaStream_t st) {
          return strataAllGather(X(send.data()), X(recv.data()), n, c.type, comm, st);
        });
      }
      if (rc == strataSuccess) check(recv.data(), want.data(), np, "recvbuff");
      guards(send, "sendbuff");
      guards(recv, "recvbuff");
      break;
    }
    case Collective::kReduceScatter: {
      GuardedBuffer send(np * es), recv(n * es);
      std::vector<unsigned char> want(n * es), input(np * es);
      fillInput(c.type, c.op, me, input.data(), 0, np, c.seed);
      fillReduced(c.type, c.op, p, want.data(), static_cast<size_t>(me) * n, n, c.seed);
      copyBytes(send.data(), input.data(), np * es);
      if (c.inPlace) {
        char* mine = static_cast<char*>(send.data()) + static_cast<size_t>(me) * n * es;
        rc = onDevice({&send, &recv}, [&](const Translate& X, cudaStream_t st) {
          return strataReduceScatter(X(send.data()), X(mine), n, c.type, c.op, comm, st);
        });
        if (rc == strataSuccess) check(mine, want.data(), n, "recvbuff (in place)");
      } else {
        rc = onDevice({&send, &recv}, [&](const Translate& X, cudaStream_t st) {
          return strataReduceScatter(X(send.data()), X(recv.data()), n, c.type, c.op, comm, st);
        });
        if (rc == strataSuccess) check(recv.data(), want.data(), n, "recvbuff");
        check(send.data(), input.data(), np, "send buffer changed");
      }
      guards(send, "sendbuff");
      guards(recv, "recvbuff");
      break;
    }
    case Collective::kGather: {
      GuardedBuffer send(n * es), recv(np * es, 0xEE);
      std::vector<unsigned char> want(np * es), input(n * es);
      fillInput(c.type, c.op, me, input.data(), 0, n, c.seed);
      for (int r = 0; r < p; ++r) fillInput(c.type, c.op, r, want.data() + static_cast<size_t>(r) * n * es, 0, n, c.seed);
      if (c.inPlace && isRoot) {
        char* mine = static_cast<char*>(recv.data()) + static_cast<size_t>(me) * n * es;
        copyBytes(mine, input.data(), n * es);
        rc = onDevice({&send, &recv}, [&](const Translate& X, cudaStream_t st) {
          return strataGather(X(mine), X(recv.data()), n, c.type, c.root, comm, st);
        });
      } else {
        copyBytes(send.data(), input.data(), n * es);
        // Non-roots pass no receive buffer: it must not be touched.
        rc = onDevice({&send, &recv}, [&](const Translate& X, cudaStream_t st) {
          return strataGather(X(send.data()), X(isRoot ? recv.data() : nullptr), n, c.type, c.root, comm, st);
        });
        check(send.data(), input.data(), n, "send buffer changed");
      }
      if (rc == strataSuccess && isRoot) check(recv.data(), want.data(), np, "recvbuff");
      guards(send, "sendbuff");
      guards(recv, "recvbuff");
      break;
    }
    case Collective::kScatter: {
      GuardedBuffer send(np * es), recv(n * es);
      std::vector<unsigned char> want(n * es), input(np * es);
      fillInput(c.type, c.op, c.root, input.data(), 0, np, c.seed);
      fillInput(c.type, c.op, c.root, want.data(), static_cast<size_t>(me) * n, n, c.seed);
      if (isRoot) copyBytes(send.data(), input.data(), np * es);
      if (c.inPlace && isRoot) {
        char* mine = static_cast<char*>(send.data()) + static_cast<size_t>(me) * n * es;
        rc = onDevice({&send, &recv}, [&](const Translate& X, cudaStream_t st) {
          return strataScatter(X(send.data()), X(mine), n, c.type, c.root, comm, st);
        });
        if (rc == strataSuccess) check(mine, want.data(), n, "recvbuff (in place)");
        if (rc == strataSuccess) check(send.data(), input.data(), np, "root's buffer changed");
      } else {
        rc = onDevice({&send, &recv}, [&](const Translate& X, cudaStream_t st) {
          return strataScatter(X(isRoot ? send.data() : nullptr), X(recv.data()), n, c.type, c.root, comm, st);
        });
        if (rc == strataSuccess) check(recv.data(), want.data(), n, "recvbuff");
        if (isRoot) check(send.data(), input.data(), np, "send buffer changed");
      }
      guards(send, "sendbuff");
      guards(recv, "recvbuff");
      break;
    }
    case Collective::kAllToAll: {
      GuardedBuffer send(np * es), recv(np * es);
      std::vector<unsigned char> want(np * es), input(np * es);
      fillInput(c.type, c.op, me, input.data(), 0, np, c.seed);  // block j goes to rank j
      for (int r = 0; r < p; ++r) {
        fillInput(c.type, c.op, r, want.data() + static_cast<size_t>(r) * n * es, static_cast<size_t>(me) * n, n, c.seed);
      }
      if (c.inPlace) {
        copyBytes(recv.data(), input.data(), np * es);
        rc = onDevice({&send, &recv}, [&](const Translate& X, cudaStream_t st) {
          return strataAlltoAll(X(recv.data()), X(recv.data()), n, c.type, comm, st);
        });
      } else {
        copyBytes(send.data(), input.data(), np * es);
        rc = onDevice({&send, &recv}, [&](const Translate& X, cudaStream_t st) {
          return strataAlltoAll(X(send.data()), X(recv.data()), n, c.type, comm, st);
        });
        check(send.data(), input.data(), np, "send buffer changed");
      }
      if (rc == strataSuccess) check(recv.data(), want.data(), np, "recvbuff");
      guards(send, "sendbuff");
      guards(recv, "recvbuff");
      break;
    }
    case Collective::kScan:
    case Collective::kExscan: {
      const bool ex = c.coll == Collective::kExscan;
      GuardedBuffer send(n * es), recv(n * es, 0xEE);
      std::vector<unsigned char> want(n * es, 0xEE), input(n * es);
      fillInput(c.type, c.op, me, input.data(), 0, n, c.seed);
      if (ex && me == 0) {
        want = c.inPlace ? input : std::vector<unsigned char>(n * es, 0xEE);  // rank 0: untouched
      } else {
        fillReduced(c.type, c.op, ex ? me : me + 1, want.data(), 0, n, c.seed);  // ranks 0..me (-1); no avg here
      }
      if (c.inPlace) {
        copyBytes(recv.data(), input.data(), n * es);
        rc = onDevice({&send, &recv}, [&](const Translate& X, cudaStream_t st) {
          return ex ? strataExscan(X(recv.data()), X(recv.data()), n, c.type, c.op, comm, st)
                    : strataScan(X(recv.data()), X(recv.data()), n, c.type, c.op, comm, st);
        });
      } else {
        copyBytes(send.data(), input.data(), n * es);
        rc = onDevice({&send, &recv}, [&](const Translate& X, cudaStream_t st) {
          return ex ? strataExscan(X(send.data()), X(recv.data()), n, c.type, c.op, comm, st)
                    : strataScan(X(send.data()), X(recv.data()), n, c.type, c.op, comm, st);
        });
        check(send.data(), input.data(), n, "send buffer changed");
      }
      if (rc == strataSuccess) check(recv.data(), want.data(), n, "recvbuff");
      guards(send, "sendbuff");
      guards(recv, "recvbuff");
      break;
    }
    case Collective::kShift: {
      GuardedBuffer send(n * es), recv(n * es);
      std::vector<unsigned char> want(n * es), input(n * es);
      const int shift = c.root;  // the matrix passes the shift in the root slot
      const int from = ((me - shift) % p + p) % p;
      fillInput(c.type, c.op, me, input.data(), 0, n, c.seed);
      fillInput(c.type, c.op, from, want.data(), 0, n, c.seed);
      if (c.inPlace) {
        copyBytes(recv.data(), input.data(), n * es);
        rc = onDevice({&send, &recv}, [&](const Translate& X, cudaStream_t st) {
          return strataShift(X(recv.data()), X(recv.data()), n, c.type, shift, comm, st);
        });
      } else {
        copyBytes(send.data(), input.data(), n * es);
        rc = onDevice({&send, &recv}, [&](const Translate& X, cudaStream_t st) {
          return strataShift(X(send.data()), X(recv.data()), n, c.type, shift, comm, st);
        });
        check(send.data(), input.data(), n, "send buffer changed");
      }
      if (rc == strataSuccess) check(recv.data(), want.data(), n, "recvbuff");
      guards(send, "sendbuff");
      guards(recv, "recvbuff");
      break;
    }
    case Collective::kBarrier: rc = strataBarrier(comm, nullptr); break;
    default: return "collective not covered by this test";
  }
  if (rc != strataSuccess) return std::string("returned ") + strataGetErrorString(rc) + ": " + strataGetLastError(comm);
  return err;
}

struct Param {
  Collective coll;
  std::string algorithm;  // "" = tuner
  std::string shape;
  bool fullTypes;         // all 10 types, or a representative three
};
void PrintTo(const Param& p, std::ostream* os) {
  *os << collectiveName(p.coll) << " algorithm=" << (p.algorithm.empty() ? "auto" : p.algorithm) << " shape=" << p.shape;
}

class CollectiveMatrix : public ::testing::TestWithParam<Param> {};

TEST_P(CollectiveMatrix, ExactOnEveryTypeOpCountAndRoot) {
  const Param param = GetParam();
  const int p = worldSize();
  const std::string spec = param.algorithm.empty() ? "" : std::string(collectiveName(param.coll)) + "=" + param.algorithm;
  strataComm_t comm = commFor(param.shape, spec);
  ASSERT_NE(comm, nullptr);
  std::vector<strataRedOp_t> ops = {strataSum};
  if (isReduction(param.coll)) ops = {strataSum, strataProd, strataMax, strataMin, strataAvg};
  if (param.coll == Collective::kScan || param.coll == Collective::kExscan) ops.pop_back();  // no avg prefix
  std::vector<size_t> counts = {0, 1, static_cast<size_t>(p + 1), 13, 1031};
  if (p > 1) counts.push_back(static_cast<size_t>(p - 1));
  std::vector<int> roots = {0};
  if (isRooted(param.coll)) roots = {0, p - 1, p / 2};
  if (param.coll == Collective::kShift) roots = {1, -1, p + 2, 0};  // the shift
  if (param.coll == Collective::kBarrier) counts = {0};
  std::vector<int> types;
  for (int t = 0; t < strataNumTypes; ++t) types.push_back(t);
  if (!param.fullTypes) types = {strataInt32, strataFloat32, strataBfloat16};
  bool ok = true;
  unsigned seed = 1;
  for (int t : types) {
    for (strataRedOp_t op : ops) {
      for (size_t count : counts) {
        for (bool inPlace : {false, true}) {
          for (int root : roots) {
            const CallCase c{param.coll, static_cast<strataDataType_t>(t), op, count, inPlace, root, seed++};
            const std::string why = runAndCheck(comm, c);
            if (!why.empty()) {
              ok = false;
              ADD_FAILURE() << describe(c, param.algorithm, param.shape, p) << ": " << why;
            }
          }
        }
      }
      if (param.coll == Collective::kBarrier) break;
    }
    if (param.coll == Collective::kBarrier) break;
  }
  // 1 MiB + 3 elements: long enough for pipelines, and not a multiple of anything.
  if (param.coll != Collective::kBarrier) {
    for (strataDataType_t t : {strataFloat32, strataInt8, strataBfloat16}) {
      for (bool inPlace : {false, true}) {
        const CallCase c{param.coll, t, ops.back(), (size_t{1} << 20) / typeSize(t) + 3, inPlace, roots.back(), seed++};
        const std::string why = runAndCheck(comm, c);
        if (!why.empty()) {
          ok = false;
          ADD_FAILURE() << describe(c, param.algorithm, param.shape, p) << ": " << why;
        }
      }
    }
  }
  EXPECT_TRUE(allRanksOk(ok)) << "a rank reported a failure above";
}

// The topology a shape string gives rank 0 (to know which compositions a shape allows).
Topology shapeTopology(const std::string& shape) {
  std::vector<int> sizes;
  Topology t;
  if (!parseNodeShape(shape.c_str(), &sizes).ok() || sizes.empty()) sizes = {worldSize()};
  if (!Topology::fromShape(sizes, worldSize(), 0, &t).ok()) Topology::fromShape({worldSize()}, worldSize(), 0, &t).ok();
  return t;
}

// Every algorithm of every collective on the discovered shape, with all types; on the other node
// shapes, the tuner's choice and every composition the shape allows, with a representative set of
// types.
std::vector<Param> params() {
  std::vector<Param> out;
  const Collective colls[] = {Collective::kAllReduce, Collective::kBroadcast,     Collective::kReduce,
                              Collective::kAllGather, Collective::kReduceScatter, Collective::kGather,
                              Collective::kScatter,   Collective::kAllToAll,      Collective::kScan,
                              Collective::kExscan,    Collective::kShift,         Collective::kBarrier};
  for (const std::string& shape : shapesFor(worldSize())) {
    const bool first = shape == "0";
    const Topology topo = shapeTopology(shape);
    for (Collective c : colls) {
      out.push_back({c, "", shape, first});
      CollectiveArgs probe;
      probe.coll = c;
      for (const HierAlgorithm* h : hierAlgorithmsFor(c)) {
        if (h->whyUnsupported(probe, topo).empty()) out.push_back({c, h->name, shape, first});
      }
      if (!first) continue;
      for (const FlatAlgorithm* a : flatAlgorithmsFor(c)) {
        if (a->whyUnsupported(CollectiveArgs{}, worldSize()).empty()) out.push_back({c, a->name, shape, true});
      }
    }
  }
  return out;
}

std::string paramName(const ::testing::TestParamInfo<Param>& info) {
  std::string shape = info.param.shape;
  for (char& ch : shape) {
    if (ch == ',') ch = '_';
  }
  return std::string(collectiveName(info.param.coll)) + "_" +
         (info.param.algorithm.empty() ? "auto" : info.param.algorithm) + "_shape" + shape + "_mem" +
         (testOnDevice() ? "device" : "host");
}

// The memory space is in every test's name and failure message (STRATA_TEST_DEVICE).
INSTANTIATE_TEST_SUITE_P(Matrix, CollectiveMatrix, ::testing::ValuesIn(params()), paramName);

// Random floats, where the order of additions matters: every algorithm agrees with a double
// precision reference within the error bound of p additions, and every rank holds the same bits.
TEST(FloatTolerance, AllReduceOfRandomValues) {
  const int p = worldSize(), me = worldRank();
  bool ok = true;
  for (const std::string& algo : {std::string(""), std::string("ring"), std::string("recursive_doubling"),
                                  std::string("rabenseifner")}) {
    strataComm_t comm = commFor("0", algo.empty() ? "" : "allreduce=" + algo);
    ASSERT_NE(comm, nullptr);
    for (size_t n : {size_t{1031}, size_t{100003}}) {
      std::vector<float> send(n), recv(n);
      std::vector<double> want(n, 0.0), bound(n, 0.0);
      for (int r = 0; r < p; ++r) {
        std::mt19937 rng(1000u + static_cast<unsigned>(r));
        std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
        for (size_t i = 0; i < n; ++i) {
          const float v = dist(rng);
          if (r == me) send[i] = v;
          want[i] += v;
          bound[i] += std::fabs(v);
        }
      }
      ASSERT_EQ(strataAllReduce(send.data(), recv.data(), n, strataFloat32, strataSum, comm, nullptr), strataSuccess)
          << strataGetLastError(comm);
      for (size_t i = 0; i < n; ++i) {
        const double tol = p * std::ldexp(bound[i], -23);
        if (std::fabs(recv[i] - want[i]) > tol) {
          ok = false;
          ADD_FAILURE() << "allreduce " << (algo.empty() ? "auto" : algo) << " n=" << n << " element " << i << ": "
                        << recv[i] << " vs " << want[i];
          break;
        }
      }
      // identical bits on every rank
      std::vector<float> first(recv);
      MPI_Bcast(first.data(), static_cast<int>(n), MPI_FLOAT, 0, MPI_COMM_WORLD);
      if (std::memcmp(first.data(), recv.data(), n * sizeof(float)) != 0) {
        ok = false;
        ADD_FAILURE() << "allreduce " << (algo.empty() ? "auto" : algo) << " n=" << n << ": ranks disagree";
      }
    }
  }
  EXPECT_TRUE(allRanksOk(ok));
}

// Exscan's rank 0 receives nothing (MPI-3.1 5.11.2: its receive buffer is not significant), so it
// may pass none, and its in-place call leaves its buffer as it was: on every exscan algorithm and
// the MPI library's own ("native", host buffers), every node shape of this rank count.
TEST(Exscan, RankZeroMayPassNoReceiveBuffer) {
  const int p = worldSize(), me = worldRank();
  if (testOnDevice()) GTEST_SKIP() << "host buffers: the native collective serves those only";
  std::vector<std::string> algos = algorithmNames(Collective::kExscan);
  algos.push_back("native");
  bool ok = true;
  for (const std::string& shape : shapesFor(p)) {
    for (const std::string& algo : algos) {
      strataComm_t comm = commFor(shape, "exscan=" + algo);
      if (comm == nullptr) continue;
      const size_t n = 13;
      std::vector<int32_t> send(n), recv(n, -7), want(n, 0);
      for (size_t i = 0; i < n; ++i) send[i] = static_cast<int32_t>(me * 5 + i);
      for (int r = 0; r < me; ++r) {
        for (size_t i = 0; i < n; ++i) want[i] += static_cast<int32_t>(r * 5 + i);
      }
      const std::string where = "exscan=" + algo + " shape=" + shape + " rank " + std::to_string(me);
      strataResult_t rc = strataExscan(send.data(), me == 0 ? nullptr : recv.data(), n, strataInt32, strataSum, comm, nullptr);
      if (rc != strataSuccess) {
        // A shape the algorithm cannot serve is refused alike on every rank; anything else fails.
        ok = ok && rc == strataInvalidUsage;
        if (rc != strataInvalidUsage) ADD_FAILURE() << where << ": " << strataGetLastError(comm);
        continue;
      }
      if (me > 0 && recv != want) {
        ok = false;
        ADD_FAILURE() << where << ": wrong prefix with rank 0 passing no receive buffer";
      }
      // A dummy shorter than count on rank 0: neither read nor written (AddressSanitizer's tier runs
      // this test).
      std::vector<int32_t> dummy(1, -9);
      std::fill(recv.begin(), recv.end(), -7);
      rc = strataExscan(send.data(), me == 0 ? dummy.data() : recv.data(), n, strataInt32, strataSum, comm, nullptr);
      if (rc != strataSuccess || dummy[0] != -9 || (me > 0 && recv != want)) {
        ok = false;
        ADD_FAILURE() << where << " with a one-element dummy on rank 0: "
                      << (rc == strataSuccess ? "wrong result or dummy written" : strataGetLastError(comm));
      }
      // In place: rank 0's buffer is its input and stays as it was.
      std::vector<int32_t> buf(send);
      rc = strataExscan(buf.data(), buf.data(), n, strataInt32, strataSum, comm, nullptr);
      const bool right = rc == strataSuccess && (me == 0 ? buf == send : buf == want);
      if (!right) {
        ok = false;
        ADD_FAILURE() << where << " in place: " << (rc == strataSuccess ? "wrong result" : strataGetLastError(comm));
      }
    }
  }
  EXPECT_TRUE(allRanksOk(ok));
}

// A barrier's one promise: no rank leaves it before every rank has entered it. The ranks arrive
// staggered (rank r sleeps r x 30 ms), each notes when it entered and left on the host's monotonic
// clock (every rank of these tests runs on one host), and every departure must come after the
// last arrival. For every barrier algorithm, on every node shape of this rank count.
TEST(Barrier, NoRankLeavesBeforeEveryRankEntered) {
  const int p = worldSize(), me = worldRank();
  if (p < 2) GTEST_SKIP() << "needs two ranks";
  for (const std::string& shape : shapesFor(p)) {
    for (const std::string& algo : algorithmNames(Collective::kBarrier)) {
      strataComm_t comm = commFor(shape, "barrier=" + algo);
      if (comm == nullptr) continue;  // the shape cannot have this algorithm (a flat-only shape)
      ASSERT_EQ(strataBarrier(comm, nullptr), strataSuccess) << strataGetLastError(comm);  // builds the plan
      std::this_thread::sleep_for(std::chrono::milliseconds(30 * me));
      const double entered = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
      const strataResult_t rc = strataBarrier(comm, nullptr);
      const double left = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
      ASSERT_EQ(rc, strataSuccess) << strataGetLastError(comm);
      double lastEntry = 0;
      MPI_Allreduce(&entered, &lastEntry, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      EXPECT_GE(left, lastEntry) << "barrier=" << algo << " shape=" << shape << " ranks=" << p << ": rank " << me
                                 << " left " << (lastEntry - left) * 1e3 << " ms before the last rank entered";
    }
  }
}

}  // namespace
}  // namespace strata::test
