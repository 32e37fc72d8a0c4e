// Tier 2 for the irregular collectives: allgatherv, gatherv, scatterv, alltoallv, reducescatterv
// with uneven counts (zeros included), displacements with gaps and out of rank order, in place and
// out of place, every algorithm, checked bit for bit; gaps in the output must stay untouched.
#include <gtest/gtest.h>

#include <cstring>
#include <sstream>

#include "inter_node/algorithms/algorithm.h"
#include "tests/mpi/mpi_test_util.h"

namespace strata::test {
namespace {

struct Layout {
  std::vector<size_t> counts, displs;
  size_t extent = 0;
};

// Counts from a seed (some zero), blocks in reverse rank order with a gap before each; packed in
// rank order when `packed` (in place needs the rank's block where the API expects it).
Layout layout(int p, unsigned seed, size_t scale, bool packed) {
  Layout l;
  l.counts.resize(static_cast<size_t>(p));
  l.displs.resize(static_cast<size_t>(p));
  for (int j = 0; j < p; ++j) l.counts[static_cast<size_t>(j)] = ((static_cast<unsigned>(j) * 7u + seed) % 5u) * scale;
  size_t pos = 0;
  for (int k = 0; k < p; ++k) {
    const int j = packed ? k : p - 1 - k;
    if (!packed) pos += 3;
    l.displs[static_cast<size_t>(j)] = pos;
    pos += l.counts[static_cast<size_t>(j)];
  }
  l.extent = pos;
  return l;
}

struct Param {
  Collective coll;
  std::string algorithm;
};

class IrregularMatrix : public ::testing::TestWithParam<Param> {};

TEST_P(IrregularMatrix, ExactWithUnevenCountsAndGaps) {
  const Param param = GetParam();
  const int p = worldSize(), me = worldRank();
  strataComm_t comm = commFor("0", param.algorithm.empty() ? "" : std::string(collectiveName(param.coll)) + "=" + param.algorithm);
  ASSERT_NE(comm, nullptr);
  bool ok = true;
  unsigned seed = 7;
  for (strataDataType_t t : {strataInt32, strataFloat32, strataBfloat16, strataUint8}) {
    const size_t es = typeSize(t);
    for (size_t scale : {size_t{1}, size_t{97}}) {
      for (bool inPlace : {false, true}) {
        for (int root : {0, p - 1}) {
          const strataRedOp_t op = param.coll == Collective::kReduceScatterv ? (seed % 2 ? strataSum : strataMax) : strataSum;
          ++seed;
          std::ostringstream what;
          what << collectiveName(param.coll) << " algorithm=" << (param.algorithm.empty() ? "auto" : param.algorithm)
               << " type=" << typeName(t) << " op=" << opName(op) << " scale=" << scale << " ranks=" << p
               << " inPlace=" << inPlace << " root=" << root << " mem=" << (testOnDevice() ? "device" : "host");
          std::string err;
          strataResult_t rc = strataSuccess;
          const Layout L = layout(p, seed, scale, inPlace);
          auto check = [&](const void* got, const void* want, size_t n, const char* where) {
            const std::string d = compareElements(t, got, want, n);
            if (!d.empty() && err.empty()) err = std::string(where) + ": " + d;
          };
          switch (param.coll) {
            case Collective::kAllGatherv:
            case Collective::kGatherv: {
              const bool gather = param.coll == Collective::kGatherv;
              const size_t mine = L.counts[static_cast<size_t>(me)];
              GuardedBuffer send(mine * es), recv(L.extent * es, 0xEE);
              std::vector<unsigned char> want(L.extent * es, 0xEE);
              for (int j = 0; j < p; ++j) {
                fillInput(t, op, j, want.data() + L.displs[static_cast<size_t>(j)] * es, 0, L.counts[static_cast<size_t>(j)], seed);
              }
              const bool significant = !gather || me == root;
              char* myBlock = static_cast<char*>(recv.data()) + L.displs[static_cast<size_t>(me)] * es;
              const void* sendPtr = send.data();
              if (inPlace && significant) {
                fillInput(t, op, me, myBlock, 0, mine, seed);
                sendPtr = myBlock;
              } else {
                fillInput(t, op, me, send.data(), 0, mine, seed);
              }
              rc = gather ? strataGatherv(sendPtr, mine, significant ? recv.data() : nullptr,
                                          significant ? L.counts.data() : nullptr, significant ? L.displs.data() : nullptr,
                                          t, root, comm, nullptr)
                          : strataAllGatherv(sendPtr, mine, recv.data(), L.counts.data(), L.displs.data(), t, comm, nullptr);
              if (rc == strataSuccess && significant) check(recv.data(), want.data(), L.extent, "recvbuff (gaps included)");
              if (!recv.guardsIntact() || !send.guardsIntact()) err = "wrote out of bounds";
              break;
            }
            case Collective::kScatterv: {
              const size_t mine = L.counts[static_cast<size_t>(me)];
              GuardedBuffer send(L.extent * es), recv(mine * es);
              std::vector<unsigned char> want(mine * es);
              if (me == root) fillInput(t, op, root, send.data(), 0, L.extent, seed);
              fillInput(t, op, root, want.data(), L.displs[static_cast<size_t>(me)], mine, seed);
              void* out = recv.data();
              if (inPlace && me == root) out = static_cast<char*>(send.data()) + L.displs[static_cast<size_t>(me)] * es;
              rc = strataScatterv(me == root ? send.data() : nullptr, me == root ? L.counts.data() : nullptr,
                                  me == root ? L.displs.data() : nullptr, out, mine, t, root, comm, nullptr);
              if (rc == strataSuccess) check(out, want.data(), mine, "recvbuff");
              if (!recv.guardsIntact() || !send.guardsIntact()) err = "wrote out of bounds";
              break;
            }
            case Collective::kAllToAllv: {
              // rank r sends f(r, j) elements to j; symmetric in place
              auto f = [&](int from, int to) {
                const int x = inPlace ? std::min(from, to) * 3 + std::max(from, to) : from * 3 + to * 5;
                return static_cast<size_t>((static_cast<unsigned>(x) + seed) % 4) * scale;
              };
              Layout S, R;
              for (int j = 0; j < p; ++j) {
                S.counts.push_back(f(me, j));
                R.counts.push_back(f(j, me));
              }
              auto place = [&](Layout& l, bool gaps) {
                size_t pos = 0;
                l.displs.assign(l.counts.size(), 0);
                for (size_t k = 0; k < l.counts.size(); ++k) {
                  const size_t j = gaps ? l.counts.size() - 1 - k : k;
                  if (gaps) pos += 2;
                  l.displs[j] = pos;
                  pos += l.counts[j];
                }
                l.extent = pos;
              };
              place(S, false);
              place(R, !inPlace);
              if (inPlace) S = R;
              GuardedBuffer send(S.extent * es), recv(R.extent * es, 0xEE);
              std::vector<unsigned char> want(R.extent * es, 0xEE), input(S.extent * es);
              // element i of my block for rank j: input value of (me, position in my send buffer)
              fillInput(t, op, me, input.data(), 0, S.extent, seed);
              for (int j = 0; j < p; ++j) {
                // rank j's block for me starts at j's send displacement for me: recompute j's layout
                Layout Sj;
                for (int k = 0; k < p; ++k) Sj.counts.push_back(f(j, k));
                if (inPlace) {
                  Layout Rj;
                  for (int k = 0; k < p; ++k) Rj.counts.push_back(f(k, j));
                  place(Rj, false);
                  Sj = Rj;
                } else {
                  place(Sj, false);
                }
                fillInput(t, op, j, want.data() + R.displs[static_cast<size_t>(j)] * es, Sj.displs[static_cast<size_t>(me)],
                          R.counts[static_cast<size_t>(j)], seed);
              }
              if (inPlace) {
                copyBytes(recv.data(), input.data(), S.extent * es);
                rc = strataAlltoAllv(recv.data(), nullptr, nullptr, recv.data(), R.counts.data(), R.displs.data(), t, comm, nullptr);
              } else {
                copyBytes(send.data(), input.data(), S.extent * es);
                rc = strataAlltoAllv(send.data(), S.counts.data(), S.displs.data(), recv.data(), R.counts.data(),
                                     R.displs.data(), t, comm, nullptr);
              }
              if (rc == strataSuccess) check(recv.data(), want.data(), R.extent, "recvbuff (gaps included)");
              if (!recv.guardsIntact() || !send.guardsIntact()) err = "wrote out of bounds";
              break;
            }
            case Collective::kReduceScatterv: {
              size_t total = 0, prefix = 0;
              for (int j = 0; j < p; ++j) {
                if (j < me) prefix += L.counts[static_cast<size_t>(j)];
                total += L.counts[static_cast<size_t>(j)];
              }
              const size_t mine = L.counts[static_cast<size_t>(me)];
              GuardedBuffer send(total * es), recv(mine * es);
              std::vector<unsigned char> want(mine * es);
              fillInput(t, op, me, send.data(), 0, total, seed);
              fillReduced(t, op, p, want.data(), prefix, mine, seed);
              void* out = inPlace ? static_cast<char*>(send.data()) + prefix * es : recv.data();
              rc = strataReduceScatterv(send.data(), out, L.counts.data(), t, op, comm, nullptr);
              if (rc == strataSuccess) check(out, want.data(), mine, "recvbuff");
              if (!recv.guardsIntact() || !send.guardsIntact()) err = "wrote out of bounds";
              break;
            }
            default: err = "not an irregular collective";
          }
          if (rc != strataSuccess) err = std::string("returned ") + strataGetErrorString(rc) + ": " + strataGetLastError(comm);
          if (!err.empty()) {
            ok = false;
            ADD_FAILURE() << what.str() << ": " << err;
          }
        }
      }
    }
  }
  EXPECT_TRUE(allRanksOk(ok)) << "a rank reported a failure above";
}

std::vector<Param> params() {
  std::vector<Param> out;
  for (Collective c : {Collective::kAllGatherv, Collective::kGatherv, Collective::kScatterv, Collective::kAllToAllv,
                       Collective::kReduceScatterv}) {
    out.push_back({c, ""});
    for (const FlatAlgorithm* a : flatAlgorithmsFor(c)) out.push_back({c, a->name});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Host, IrregularMatrix, ::testing::ValuesIn(params()),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           return std::string(collectiveName(info.param.coll)) + "_" +
                                  (info.param.algorithm.empty() ? "auto" : info.param.algorithm);
                         });

}  // namespace
}  // namespace strata::test
