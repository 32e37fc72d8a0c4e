// The C++ header (strata.hpp) as a program uses it: typed spans, the two-buffer calls with
// ordinary (non-const) spans, in place, exceptions carrying the code and message, and a
// communicator that moves and destroys itself. Results against values computed here.
#include <gtest/gtest.h>
#include <strata/strata.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tests/mpi/mpi_test_util.h"

namespace strata::test {
namespace {

TEST(CppApi, EveryCallWithOrdinarySpans) {
  const int p = worldSize(), me = worldRank();
  strata::Comm comm(MPI_COMM_WORLD);
  ASSERT_EQ(comm.size(), p);
  ASSERT_EQ(comm.rank(), me);
  const size_t n = 13;
  std::vector<int32_t> send(n), recv(n, -1);
  for (size_t i = 0; i < n; ++i) send[i] = static_cast<int32_t>(me * 100 + i);
  std::span<int32_t> s(send), r(recv);  // non-const spans: the send side converts
  comm.allReduce(s, r, strataSum);
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(recv[i], static_cast<int32_t>(100 * p * (p - 1) / 2 + p * i)) << i;

  const int root = p - 1;
  std::fill(recv.begin(), recv.end(), -1);
  comm.reduce(s, r, strataMax, root);
  if (me == root) EXPECT_EQ(recv[n - 1], static_cast<int32_t>((p - 1) * 100 + n - 1));

  std::vector<float> all(n * static_cast<size_t>(p), 0.0f), mine(n, static_cast<float>(me));
  comm.allGather(std::span<float>(mine), std::span<float>(all));
  for (int q = 0; q < p; ++q) EXPECT_EQ(all[static_cast<size_t>(q) * n], static_cast<float>(q));

  std::vector<double> whole(n * static_cast<size_t>(p), 1.0), part(n, 0.0);
  comm.reduceScatter(std::span<double>(whole), std::span<double>(part), strataSum);
  EXPECT_EQ(part[0], static_cast<double>(p));

  std::vector<int64_t> data(n, me == 0 ? 42 : 0);
  comm.broadcast(std::span<int64_t>(data), 0);
  EXPECT_EQ(data[n - 1], 42);
  comm.allReduce(std::span<int64_t>(data), strataSum);  // in place
  EXPECT_EQ(data[0], 42 * p);
  comm.barrier();
  EXPECT_EQ(comm.asyncError(), strataSuccess);
}

TEST(CppApi, ErrorsAreExceptionsWithTheCodeAndMessage) {
  strata::Comm comm(MPI_COMM_WORLD);
  std::vector<float> a(4), b(3);
  // Sizes that do not match are this rank's own mistake, found before any rank communicates.
  try {
    comm.allReduce(std::span<float>(a), std::span<float>(b), strataSum);
    FAIL() << "no exception";
  } catch (const strata::Error& e) {
    EXPECT_EQ(e.code(), strataInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("recv.size() != send.size()"), std::string::npos) << e.what();
  }
  try {
    comm.broadcast(std::span<float>(a), worldSize());  // a root out of range: every rank alike
    FAIL() << "no exception";
  } catch (const strata::Error& e) {
    EXPECT_EQ(e.code(), strataInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("strataBroadcast"), std::string::npos) << e.what();
  }
}

TEST(CppApi, ACommunicatorMovesAndDestroysItselfOnce) {
  strata::Comm first(MPI_COMM_WORLD);
  strataComm_t handle = first.get();
  strata::Comm second(std::move(first));
  EXPECT_EQ(first.get(), nullptr);
  EXPECT_EQ(second.get(), handle);
  strata::Comm third(MPI_COMM_WORLD);
  third = std::move(second);  // destroys third's own communicator (collective: every rank does it)
  EXPECT_EQ(third.get(), handle);
  std::vector<int32_t> x(5, 1);
  third.allReduce(std::span<int32_t>(x), strataSum);
  EXPECT_EQ(x[4], worldSize());
  EXPECT_THROW(first.barrier(), strata::Error) << "a moved-from communicator is no communicator";
}

}  // namespace
}  // namespace strata::test
