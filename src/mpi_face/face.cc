#include "src/mpi_face/face.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#ifdef STRATA_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace strata::mpi_face {

namespace {

thread_local int tGuardDepth = 0;

struct Counts {
  std::atomic<long> served{0};
  std::mutex mutex;
  // why (a string literal: its address is its identity, so counting allocates nothing) -> calls
  std::map<const char*, long> passed;
};

bool debugInfo() {
  const char* d = std::getenv("STRATA_DEBUG");
  return d != nullptr && (std::strcmp(d, "INFO") == 0 || std::strcmp(d, "TRACE") == 0);
}

struct State {
  bool enabled[kNumCalls];
  // The counts are kept only where MPI_Finalize prints them (STRATA_DEBUG=INFO or TRACE, as the
  // process started): counting a call that MPI serves costs more than the face's own work for it
  // (the last algorithm's query holds the communicator once more, and a passed call's count is a
  // map's entry under a lock).
  const bool keepCounts = debugInfo();
  int commKey = MPI_KEYVAL_INVALID;
  int selfKey = MPI_KEYVAL_INVALID;
  std::atomic<bool> keysMade{false};  // commKey and selfKey are set (ensureKeys), read without the lock
  Counts counts[kNumCalls];
  std::mutex mutex;                 // creation of keyvals and communicators
  std::vector<MPI_Comm> withComm;   // MPI communicators holding a Strata communicator, in creation order
  std::atomic<bool> finalizing{false};  // MPI_Finalize has destroyed them (deleteSelf)
  State() {
    const char* list = std::getenv("STRATA_MPI_COLLECTIVES");
    for (int c = 0; c < kNumCalls; ++c) enabled[c] = list == nullptr || *list == '\0';
    if (list == nullptr || *list == '\0') return;
    const std::string spec = std::string(",") + list + ",";
    for (int c = 0; c < kNumCalls; ++c) {
      enabled[c] = spec.find(std::string(",") + callName(static_cast<Call>(c)) + ",") != std::string::npos;
    }
  }
};

State& state() {
  static State* s = new State;  // never destroyed: MPI_Finalize's callbacks use it at exit
  return *s;
}

// Diagnostics only: where the host has no memory left to build its lines, some are not printed.
void printCounts() noexcept try {
  if (!state().keepCounts) return;
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int c = 0; c < kNumCalls; ++c) {
    Counts& k = state().counts[c];
    std::lock_guard<std::mutex> lock(k.mutex);
    if (k.served.load() == 0 && k.passed.empty()) continue;
    std::string passed;
    long total = 0;
    for (const auto& [why, n] : k.passed) {
      passed += "; " + std::to_string(n) + " " + why;
      total += n;
    }
    std::fprintf(stderr, "[strata-mpi] rank %d %s: %ld served by Strata, %ld passed to MPI%s\n", rank,
                 callName(static_cast<Call>(c)), k.served.load(), total, passed.c_str());
  }
} catch (...) {
  std::fprintf(stderr, "[strata-mpi] the counts of calls served and passed: no host memory to print them\n");
}

// What a slot holds once the face aborted its Strata communicator (abortStrataComm): its calls
// fail from then on, on this rank as on the peers (passed to MPI, they would wait there for peers
// whose Strata calls fail). Never a live communicator.
char gAbortedMarker;
strataComm_t abortedComm() { return reinterpret_cast<strataComm_t>(&gAbortedMarker); }

// What an MPI communicator's attribute points to where Strata created its communicator (the
// attribute is null where it could not): that communicator, until an abort frees it and leaves
// abortedComm(). Allocated before the creation, so that an abort, which may come where the host has
// no memory left, changes it with neither an allocation nor an MPI call (MPI's attribute calls may
// allocate).
struct CommSlot {
  std::atomic<strataComm_t> sc{nullptr};
};

// The slot of `comm`, or null (no Strata communicator, or none could be created). No allocation.
CommSlot* slotOf(MPI_Comm comm) noexcept {
  int key = MPI_KEYVAL_INVALID;
  try {
    key = state().commKey;
  } catch (...) {
    return nullptr;  // the face's State could not be made: no communicator of the face exists yet
  }
  void* value = nullptr;
  int found = 0;
  if (key == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL || PMPI_Comm_get_attr(comm, key, &value, &found) != MPI_SUCCESS ||
      !found) {
    return nullptr;
  }
  return static_cast<CommSlot*>(value);
}

// Attribute callbacks run inside the MPI library: Strata's MPI calls go straight to it.
int deleteComm(MPI_Comm comm, int, void* value, void*) {
  Guard guard;
  {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.withComm.erase(std::remove(s.withComm.begin(), s.withComm.end(), comm), s.withComm.end());
  }
  if (value == nullptr) return MPI_SUCCESS;
  CommSlot* slot = static_cast<CommSlot*>(value);
  const strataComm_t sc = slot->sc.load();
  if (sc != nullptr && sc != abortedComm() && strataCommDestroy(sc) != strataSuccess) {
    // Not the program's error (MPI_Comm_free succeeds): said, so that it is seen (the face tests fail on it).
    std::fprintf(stderr, "[strata-mpi] freeing an MPI communicator, destroying its Strata communicator failed: %s\n",
                 strataGetLastError(nullptr));
  }
  delete slot;
  return MPI_SUCCESS;
}

// MPI_Finalize deletes MPI_COMM_SELF's attributes first, while MPI still works (MPI promises that
// for MPI_COMM_SELF only): every Strata communicator still alive is destroyed here, in the order the
// communicators were created (the same on every rank), since Strata's destroy is collective.
int deleteSelf(MPI_Comm, int, void*, void*) {
  printCounts();
  State& s = state();
  // A collective the program makes after this (in an MPI_COMM_SELF attribute's delete callback
  // set before the face's, which MPI deletes later) goes to MPI: a Strata communicator made now
  // would never be destroyed.
  s.finalizing.store(true);
  for (;;) {
    MPI_Comm comm = MPI_COMM_NULL;
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      if (s.withComm.empty()) break;
      comm = s.withComm.front();
    }
    PMPI_Comm_delete_attr(comm, s.commKey);  // runs deleteComm, which drops it from the list
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.withComm.empty() && s.withComm.front() == comm) s.withComm.erase(s.withComm.begin());
  }
  return MPI_SUCCESS;
}

// The keyvals, and MPI_COMM_SELF's attribute whose deletion at MPI_Finalize prints the counts.
void ensureKeys() {
  State& s = state();
  if (s.keysMade.load(std::memory_order_acquire)) return;  // every call after the first
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.commKey != MPI_KEYVAL_INVALID) return;
  PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, deleteComm, &s.commKey, nullptr);
  PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, deleteSelf, &s.selfKey, nullptr);
  PMPI_Comm_set_attr(MPI_COMM_SELF, s.selfKey, nullptr);
  s.keysMade.store(true, std::memory_order_release);
}

}  // namespace

const char* callName(Call c) {
  static const char* const kNames[kNumCalls] = {
      "allreduce", "bcast",   "reduce",  "allgather", "allgatherv", "reduce_scatter_block", "reduce_scatter", "alltoall",
      "alltoallv", "gather",  "gatherv", "scatter",   "scatterv",   "scan",                 "exscan",         "barrier"};
  return kNames[static_cast<int>(c)];
}

Guard::Guard() { ++tGuardDepth; }
Guard::~Guard() { --tGuardDepth; }
bool Guard::active() { return tGuardDepth > 0; }

bool mayServe(Call c, MPI_Comm comm, const char** why) {
  if (Guard::active()) {
    *why = nullptr;  // Strata's own call: not the program's, not counted
    return false;
  }
  if (!state().enabled[static_cast<int>(c)]) {
    *why = "not in STRATA_MPI_COLLECTIVES";
    return false;
  }
  if (state().finalizing.load()) {
    *why = "MPI_Finalize has begun (Strata's communicators are destroyed)";
    return false;
  }
  int inter = 0;
  if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) {
    *why = "invalid communicator (MPI reports it)";
    return false;
  }
  if (inter) {
    *why = "intercommunicator";
    return false;
  }
  return true;
}

strataComm_t strataCommOf(MPI_Comm comm, const char** why) {
  ensureKeys();
  State& s = state();
  void* value = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(comm, s.commKey, &value, &found);
  if (found) {
    if (value == nullptr) {
      *why = "Strata could not create its communicator";
      return nullptr;
    }
    const strataComm_t sc = static_cast<CommSlot*>(value)->sc.load();
    if (sc == abortedComm()) throw AbortedHere{};  // the call fails at once (entryPoint)
    return sc;
  }
  Guard guard;
  strataComm_t sc = nullptr;
  // The MPI library's own collective is a candidate unless STRATA_MPI_NATIVE=0: the face never
  // picks a Strata algorithm the model expects to be slower than what the program had before.
  strataConfig_t config = STRATA_CONFIG_INITIALIZER;
  const char* native = std::getenv("STRATA_MPI_NATIVE");
  config.mpiNative = native == nullptr || std::atoi(native) > 0 ? 1 : 0;
  CommSlot* slot = new (std::nothrow) CommSlot;
  const strataResult_t rc = slot == nullptr ? strataSystemError : strataCommInitMpi(&sc, comm, &config);
  // Every rank learns whether every rank has one, so all take the same path from here on.
  int mine = rc == strataSuccess ? 1 : 0, all = 0;
  PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
  if (all != 1) {
    if (sc != nullptr) strataCommDestroy(sc);
    sc = nullptr;
    delete slot;
    slot = nullptr;
    *why = "Strata could not create its communicator";
  } else {
    slot->sc.store(sc);
  }
  PMPI_Comm_set_attr(comm, s.commKey, slot);
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.withComm.push_back(comm);
  }
  return sc;
}

void countPassed(Call c, const char* why) noexcept {
  if (why == nullptr || !state().keepCounts) return;
  try {
    ensureKeys();
    Counts& k = state().counts[static_cast<int>(c)];
    std::lock_guard<std::mutex> lock(k.mutex);
    ++k.passed[why];
  } catch (...) {
    // No host memory for the count's entry: the call goes to MPI all the same, uncounted.
  }
}

bool onDevice(const void* p) {
#ifdef STRATA_HAVE_CUDA
  cudaPointerAttributes attr{};
  if (p == nullptr || cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    cudaGetLastError();  // a host pointer unknown to CUDA, or no usable device: not an error to keep
    return false;
  }
  return attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged;
#else
  (void)p;
  return false;
#endif
}

namespace {

// The MPI error class (MPI-3.1 8.4) of a Strata failure: strataInvalidArgument is MPI_ERR_ARG,
// strataInternalError MPI_ERR_INTERN, every other failure (timeout, a peer's failure, ranks that
// disagree, CUDA, the system) MPI_ERR_OTHER, whose message says which.
int errorClassOf(strataResult_t rc) {
  switch (rc) {
    case strataSuccess: return MPI_SUCCESS;
    case strataInvalidArgument: return MPI_ERR_ARG;
    case strataInternalError: return MPI_ERR_INTERN;
    default: return MPI_ERR_OTHER;
  }
}

// The face's error code in `errorClass`, its MPI_Error_string now `message`: one code per class,
// added at the class's first failure, its string replaced at each (MPI lets a user code's string
// be replaced; a predefined code's cannot be), so a program on MPI_ERRORS_RETURN reads both what
// kind of failure it was (MPI_Error_class) and what went wrong. Where MPI adds no code, the class
// itself, with MPI's own string.
int faceCode(int errorClass, const std::string& message) {
  static std::mutex mutex;
  static std::map<int, int> codes;  // class -> the face's code in it
  std::lock_guard<std::mutex> lock(mutex);
  auto it = codes.find(errorClass);
  if (it == codes.end()) {
    int code = errorClass;
    if (PMPI_Add_error_code(errorClass, &code) != MPI_SUCCESS) code = errorClass;
    it = codes.emplace(errorClass, code).first;
  }
  if (it->second != errorClass) {
    PMPI_Add_error_string(it->second, message.substr(0, MPI_MAX_ERROR_STRING - 1).c_str());
  }
  return it->second;
}

}  // namespace

int failAborted(Call c, MPI_Comm comm) {
  return failServed(c, comm, MPI_ERR_OTHER, "the communicator's Strata communicator was aborted after an earlier call failed on this rank");
}

int finishServed(Call c, MPI_Comm comm, strataComm_t sc, strataResult_t rc, const void* probe) {
#ifdef STRATA_HAVE_CUDA
  // Device (or managed) buffers: the call was queued on the legacy default stream; MPI returns with
  // the result in place.
  if (rc == strataSuccess && onDevice(probe)) {
    // Queued device work that fails (on the progress thread) leaves the stream complete: its error
    // is the communicator's asynchronous one, which MPI's return must carry. (It may also be a
    // peer's notice of a failure in the next call, heard before this one returns: the call then
    // reports it a call early.)
    strataResult_t async = strataSuccess;
    if (cudaStreamSynchronize(nullptr) != cudaSuccess) rc = strataUnhandledCudaError;
    else if (strataCommGetAsyncError(sc, &async) == strataSuccess && async != strataSuccess) rc = async;
  }
#else
  (void)probe;
#endif
  if (rc == strataSuccess) {
    if (!state().keepCounts) return MPI_SUCCESS;
    if (std::strcmp(strataCommLastAlgorithm(sc), "native") == 0) {
      countPassed(c, "the model expects the MPI library's own collective to be faster");
    } else {
      state().counts[static_cast<int>(c)].served.fetch_add(1, std::memory_order_relaxed);
    }
    return MPI_SUCCESS;
  }
  return failServed(c, comm, errorClassOf(rc), std::string(strataGetErrorString(rc)) + ": " + strataGetLastError(sc));
}

namespace {

// Hands `code` to the communicator's MPI error handler: MPI_ERRORS_ARE_FATAL prints `message` and
// aborts the job, MPI_ERRORS_RETURN returns the code, any other handler is called with it. Nothing
// allocated here, so outOfMemory() can use it where memory ran out. The program's handler may throw
// (a C++ program's): its exception goes to the program.
int handOver(MPI_Comm comm, int code, const char* message) {
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  PMPI_Comm_get_errhandler(comm, &handler);
  const bool returns = handler == MPI_ERRORS_RETURN;
  const bool fatal = handler == MPI_ERRORS_ARE_FATAL;
  if (handler != MPI_ERRHANDLER_NULL) PMPI_Errhandler_free(&handler);
  if (fatal) {
    std::fprintf(stderr, "%s\n", message);
    PMPI_Abort(comm, code);
  }
  if (!returns) PMPI_Comm_call_errhandler(comm, code);
  return code;
}

// Aborts the Strata communicator `comm` holds, where it is live, usable and has peers, which tells
// them (strataCommAbort); its slot then holds abortedComm(). False where there was no abort: no
// peers, failed or aborted already, or still live (another thread's call held it past the bound: it
// is destroyed with its MPI communicator). Allocates nothing of its own.
bool abortStrataComm(MPI_Comm comm) noexcept {
  CommSlot* slot = slotOf(comm);
  const strataComm_t sc = slot == nullptr ? nullptr : slot->sc.load();
  int size = 1;
  if (sc == nullptr || sc == abortedComm() || strataCommCount(sc, &size) != strataSuccess || size <= 1) return false;
  if (strataCommAbort(sc) != strataSuccess) return false;
  slot->sc.store(abortedComm());
  return true;
}

constexpr const char* kAbortedNote = " (this rank took no part in the call and aborted the communicator)";

}  // namespace

int failServed(Call c, MPI_Comm comm, int errorClass, const std::string& what) {
  const std::string message = std::string("strata-mpi: MPI_") + callName(c) + ": " + what;
  return handOver(comm, faceCode(errorClass, message), message.c_str());
}

int refuseServed(Call c, MPI_Comm comm, int errorClass, const std::string& what) {
  Guard guard;  // the abort's notices are Strata's own MPI calls
  const bool aborted = abortStrataComm(comm);
  return failServed(c, comm, errorClass, aborted ? what + kAbortedNote : what);
}

int outOfMemory(Call c, MPI_Comm comm) {
  Guard guard;
  const bool aborted = abortStrataComm(comm);
  char message[MPI_MAX_ERROR_STRING];
  std::snprintf(message, sizeof message, "strata-mpi: MPI_%s: no host memory for the face's own work%s", callName(c),
                aborted ? kAbortedNote : "");
  return handOver(comm, MPI_ERR_NO_MEM, message);
}

}  // namespace strata::mpi_face
