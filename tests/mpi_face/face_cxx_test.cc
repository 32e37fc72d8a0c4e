// The MPI face (preloaded) beneath a C++ program. On a rank whose host runs out of memory, through
// the MPI functions an ordinary program calls (with MPI_ERRORS_RETURN): no std::bad_alloc leaves an
// MPI function, every rank's call returns an error, and another communicator works afterwards (the
// process's operator new is replaced, tests/mpi/failing_new.h, which reaches the face's and
// Strata's allocations). And an exception the program's own error handler throws reaches the
// program, as it would without the face.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "tests/mpi/failing_new.h"

namespace {

int failures = 0;
int worldRank = 0;

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      ++failures;                                                              \
      std::fprintf(stderr, "[rank %d] %s:%d: ", worldRank, __FILE__, __LINE__); \
      std::fprintf(stderr, __VA_ARGS__);                                       \
      std::fprintf(stderr, "\n");                                              \
    }                                                                          \
  } while (0)

struct Outcome {
  int rc = MPI_SUCCESS, cls = MPI_SUCCESS;
  char text[MPI_MAX_ERROR_STRING] = "";
  double seconds = 0;
};
template <typename Call>
Outcome timed(Call&& call) {
  Outcome o;
  const auto start = std::chrono::steady_clock::now();
  o.rc = call();
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (o.rc != MPI_SUCCESS) {
    int len = 0;
    MPI_Error_class(o.rc, &o.cls);
    MPI_Error_string(o.rc, o.text, &len);
  }
  return o;
}

MPI_Comm returningDup() {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  return comm;
}

// The last rank's staging of a strided allgather (1 MiB a block) does not fit: allocations of
// 1 MiB or more fail there, the rest succeed, as where one large buffer finds no room. That rank
// takes no part and aborts the communicator; its peers' part fails at once, naming the abort.
void stagingDoesNotFit(int p, int me) {
  const int victim = p - 1, n = 1 << 18;
  MPI_Comm comm = returningDup();
  MPI_Datatype strided;  // one int every other: the receive side is packed through staging
  MPI_Type_vector(n, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  std::vector<int> send(n, me + 1), recv(2 * static_cast<size_t>(n) * p, 0);
  CHECK(MPI_Allgather(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, comm) == MPI_SUCCESS, "warm-up allgather");
  // Every rank out of the warm-up before the abort: a peer still in it would fail it too.
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == victim) strata::test::failAllocationsFrom(1 << 20);
  const Outcome o = timed([&] { return MPI_Allgather(send.data(), n, MPI_INT, recv.data(), 1, strided, comm); });
  strata::test::allowAllocations();
  if (me == victim) {
    CHECK(o.cls == MPI_ERR_NO_MEM, "the rank without room for its staging: code %d of class %d, '%s'", o.rc, o.cls, o.text);
    CHECK(p == 1 || std::strstr(o.text, "aborted") != nullptr, "its message names the abort: '%s'", o.text);
  } else {
    CHECK(o.cls == MPI_ERR_OTHER && std::strstr(o.text, "remote process") != nullptr,
          "a peer of the rank without room for its staging: code %d of class %d, '%s'", o.rc, o.cls, o.text);
  }
  CHECK(o.seconds < 8, "the strided allgather took %.1f s: its end must not wait for the bound (10 s)", o.seconds);
  if (p > 1) {
    const Outcome b = timed([&] { return MPI_Barrier(comm); });
    CHECK(b.rc != MPI_SUCCESS, "a barrier on the communicator after the abort succeeded");
    // On the rank that aborted, the call fails before it reaches Strata, and says why.
    CHECK(me != victim || std::strstr(b.text, "was aborted after an earlier call failed on this rank") != nullptr,
          "the barrier after the abort on the rank that aborted: '%s'", b.text);
  }
  MPI_Type_free(&strided);
  MPI_Comm_free(&comm);
}

// No allocation at all succeeds on the last rank through one allreduce of a count no call had
// before: Strata builds its plan then, and the face's own message of the failure cannot be built
// either. The rank gets MPI_ERR_NO_MEM (MPI's own code, which needs no string), its peers an error
// by the bound (STRATA_TIMEOUT) at the latest, and the communicator fails on every rank.
void nothingAllocates(int p, int me) {
  const int victim = p - 1;
  MPI_Comm comm = returningDup();
  std::vector<int> in(1021, 1), out(1021, 0);
  CHECK(MPI_Allreduce(in.data(), out.data(), 5, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS && out[0] == p, "warm-up allreduce");
  MPI_Barrier(MPI_COMM_WORLD);
  const long failedBefore = strata::test::failedAllocations();
  if (me == victim) strata::test::failAllocationsFrom(0);
  const Outcome o = timed([&] { return MPI_Allreduce(in.data(), out.data(), 1021, MPI_INT, MPI_SUM, comm); });
  strata::test::allowAllocations();
  if (me == victim) {
    CHECK(o.cls == MPI_ERR_NO_MEM, "the rank without memory: code %d of class %d, '%s'", o.rc, o.cls, o.text);
    CHECK(strata::test::failedAllocations() > failedBefore, "no allocation failed: the allreduce allocated nothing");
  } else {
    CHECK(o.rc != MPI_SUCCESS, "a peer of the rank without memory succeeded");
  }
  CHECK(o.seconds < 40, "the allreduce took %.1f s, past the bound (10 s)", o.seconds);
  if (p > 1) CHECK(MPI_Barrier(comm) != MPI_SUCCESS, "a barrier on the communicator that failed succeeded");
  MPI_Comm_free(&comm);
}

struct HandlerThrew {
  int code;
};
void throwingHandler(MPI_Comm*, int* code, ...) { throw HandlerThrew{*code}; }

// Ranks that pass different counts to an allreduce Strata serves: Strata refuses it on every rank
// (the communicator stays usable), and the error handler, which throws, is called with its code.
void handlerExceptionReachesTheProgram(int p, int me) {
  if (p < 2) return;  // one rank cannot disagree with itself
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Errhandler handler;
  MPI_Comm_create_errhandler(throwingHandler, &handler);
  MPI_Comm_set_errhandler(comm, handler);
  std::vector<int> in(4, 1), out(4, 0);
  bool caught = false;
  int cls = MPI_SUCCESS;
  try {
    MPI_Allreduce(in.data(), out.data(), me == 0 ? 3 : 4, MPI_INT, MPI_SUM, comm);
  } catch (const HandlerThrew& e) {
    caught = true;
    MPI_Error_class(e.code, &cls);
  }
  CHECK(caught && cls == MPI_ERR_OTHER, "the handler's exception for ranks that disagree: caught %d, class %d", caught, cls);
  try {
    CHECK(MPI_Allreduce(in.data(), out.data(), 4, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS && out[3] == p,
          "an allreduce after the refused one: %d", out[3]);
  } catch (const HandlerThrew& e) {
    CHECK(false, "the allreduce after the refused one failed: code %d", e.code);
  }
  MPI_Comm_free(&comm);
  MPI_Errhandler_free(&handler);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0, p = 1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  stagingDoesNotFit(p, worldRank);
  nothingAllocates(p, worldRank);
  handlerExceptionReachesTheProgram(p, worldRank);
  // Afterwards, a fresh communicator serves calls and gets them right.
  MPI_Comm comm = returningDup();
  std::vector<int> in(333, worldRank), out(333, -1);
  CHECK(MPI_Allreduce(in.data(), out.data(), 333, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS && out[332] == p * (p - 1) / 2,
        "an allreduce on a fresh communicator after them: %d", out[332]);
  MPI_Comm_free(&comm);
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (worldRank == 0) std::printf("face_cxx_test: %d ranks, %d failed checks\n", p, all);
  MPI_Finalize();
  return all == 0 ? 0 : 1;
}
