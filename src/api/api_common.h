// Shared plumbing of the C entry points: handle checks, argument validation, error recording.
#pragma once

#include <strata/strata.h>

#include <new>

#include "kernels/plan/collective.h"
#include "src/core/communicator.h"
#include "src/core/device_path.h"

namespace strata::api {

// Records a failed call's message (on the communicator and the calling thread) and returns its code.
// Where the host has no memory for the message, the message kept is kNoHostMemory.
strataResult_t finish(strataComm_t comm, const char* function, const Status& status) noexcept;

// The messages of a call that ran out of host memory and of one an unknown exception ended: short
// enough for a std::string's own buffer (with the standard library's short-string optimisation),
// so neither allocates where nothing else could.
inline constexpr const char* kNoHostMemory = "no host memory";
inline constexpr const char* kUnknownException = "an exception";
// Records `code` with the message `note` (one of the two above), where the failure's own message
// could not be built; where even the note cannot be kept, the message is empty. Allocates nothing
// beyond the note.
strataResult_t finishShort(strataComm_t comm, strataResult_t code, const char* note) noexcept;

// A C entry point's whole work: an exception that escapes `body` (a message or a container that
// could not be allocated) is returned as its code, strataSystemError for std::bad_alloc and
// strataInternalError for any other, never thrown across the C boundary.
template <typename Body>
strataResult_t noThrow(const char* function, Body&& body) noexcept;

// Checks the handle, marks the call in flight for abort, and runs `body`.
template <typename Body>
strataResult_t call(strataComm_t comm, const char* function, Body&& body, bool collective = false);

// As call(), for a collective: numbers it (comm->seq, every call alike, refused or not), and where
// it fails on this rank while the communicator is still usable, tells the peers it refused it (or,
// ended by strataCommAbort, that the communicator failed) so they stop waiting for this rank
// (src/core/peer_notices.h).
template <typename Body>
strataResult_t collective(strataComm_t comm, const char* function, Body&& body);

class Hold;
// The handle is not NULL and is held (Hold): a live communicator no teardown frees meanwhile.
Status checkHandle(strataComm_t comm, const Hold& hold);
// The handle, held (Hold), and usable: not aborted, no earlier fatal error (for a `collective`,
// the notices that came in since are read first: PeerNotices).
Status checkComm(strataComm_t comm, const Hold& hold, bool collective = false);

// Validates a collective's arguments on this rank and decides whether it is in place. Nothing is
// read or written before this returns success. The uses are the table's (sendUse, recvUse).
Status validate(strataComm* comm, CollectiveArgs* args, const void* send, const void* recv, BufferUse sendUse,
                BufferUse recvUse);

// count x p x element size must be addressable (the gathered buffers' size).
Status checkCountOverflow(const CollectiveArgs& args, int p);

// A call's arguments as the entry points receive them (the table and validate() do the rest).
inline CollectiveArgs makeArgs(Collective coll, size_t count, strataDataType_t type, strataRedOp_t op, int root) {
  CollectiveArgs a;
  a.coll = coll;
  a.count = count;
  a.type = type;
  a.op = op;
  a.root = root;
  return a;
}

// Checks, then runs a regular collective.
strataResult_t runRegular(const char* function, strataComm_t comm, CollectiveArgs args, const void* send, void* recv,
                          cudaStream_t stream);

// ---- template definition ----

// An API call's hold on its communicator (acquireComm): while held, no teardown frees it.
class Hold {
 public:
  explicit Hold(strataComm_t c) : comm_(acquireComm(c) ? c : nullptr) {}
  ~Hold() {
    if (comm_ != nullptr) releaseComm(comm_);
  }
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;
  bool held() const { return comm_ != nullptr; }

 private:
  strataComm_t comm_;
};

template <typename Body>
strataResult_t noThrow(const char* function, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return finishShort(nullptr, strataSystemError, kNoHostMemory);
  } catch (...) {
    return finishShort(nullptr, strataInternalError, kUnknownException);
  }
}

// `body(comm)`, with an exception turned into its Status.
template <typename Body>
Status guarded(strataComm_t comm, Body&& body) {
  try {
    return body(comm);
  } catch (const std::bad_alloc&) {
    return Status(strataSystemError, kNoHostMemory);
  } catch (const std::exception& e) {
    return makeStatus(strataInternalError, "unexpected exception: %s", e.what());
  } catch (...) {
    return makeStatus(strataInternalError, "unexpected exception");
  }
}

template <typename Body>
strataResult_t call(strataComm_t comm, const char* function, Body&& body, bool collective) {
  return noThrow(function, [&] {
    Hold hold(comm);
    Status s = checkComm(comm, hold, collective);
    if (!s.ok()) return finish(hold.held() ? comm : nullptr, function, s);
    return finish(comm, function, guarded(comm, body));
  });
}

// Where this rank could not tell its peers of a call it failed (no host memory for the notice, or
// another exception): its calls and theirs no longer pair up, so the communicator fails here
// without a word to them, with `code` and the message `note` (finishShort's); its next calls fail
// instead of meeting the peers' earlier one, whose wait ends at the bound. Allocates nothing
// beyond the note.
void failUntold(strataComm* c, strataResult_t code, const char* note) noexcept;

template <typename Body>
strataResult_t collective(strataComm_t comm, const char* function, Body&& body) {
  return call(comm, function, [&](strataComm* c) -> Status {
    const unsigned long long seq = ++c->seq;
    c->callFailedAlike = false;
    const Status s = guarded(c, body);
    if (s.ok() || !c->fatal.ok() || c->callFailedAlike) return s;
    try {
      const std::string what = std::string(function) + ": " + s.message();
      if (c->aborted.load()) {
        c->notices.failed(seq, what);
        return s;
      }
      // What arrived meanwhile may have ended the communicator already (a peer refused a call this
      // rank made): then it fails instead, which tells its peers. The peers' device kernels waiting
      // for this rank in this call hear it through the stop records.
      stopPeerKernels(c, seq, false);
      const Status heard = c->notices.refused(seq, what, c->wait);
      if (!heard.ok()) failComm(c, heard);
    } catch (const std::bad_alloc&) {
      failUntold(c, strataSystemError, kNoHostMemory);
    } catch (...) {
      failUntold(c, strataInternalError, kUnknownException);
    }
    return s;
  }, true);
}

}  // namespace strata::api
