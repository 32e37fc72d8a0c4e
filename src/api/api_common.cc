#include "src/api/api_common.h"

#include <cstdint>

#include "kernels/common/log.h"
#include "src/core/collective_runner.h"
#include "src/core/device_path.h"
#include "src/core/memory_space.h"

namespace strata::api {

thread_local std::string tlsLastError;

strataResult_t finish(strataComm_t comm, const char* function, const Status& status) noexcept {
  if (status.ok()) return strataSuccess;
  try {
    const std::string message = std::string(function) + ": " + status.message();
    tlsLastError = message;
    if (comm != nullptr) comm->setLastError(message);  // the caller holds it (Hold), or passes null
    STRATA_WARN("%s [%s]", message.c_str(), resultName(status.code()));
  } catch (...) {
    return finishShort(comm, status.code(), kNoHostMemory);
  }
  return status.code();
}

strataResult_t finishShort(strataComm_t comm, strataResult_t code, const char* note) noexcept {
  try {
    tlsLastError = note;
  } catch (...) {
    tlsLastError.clear();
  }
  if (comm != nullptr) {
    std::lock_guard<std::mutex> lock(comm->errorMutex);
    try {
      comm->lastError = note;
    } catch (...) {
      comm->lastError.clear();
    }
  }
  return code;
}

void failUntold(strataComm* c, strataResult_t code, const char* note) noexcept {
  try {
    c->fatal = Status(code, note);
  } catch (...) {
    c->fatal = Status(code, std::string());  // an empty message allocates nothing
  }
  finishShort(c, code, note);
  c->fatalCode.store(code, std::memory_order_release);
}

Status checkHandle(strataComm_t comm, const Hold& hold) {
  STRATA_REQUIRE(comm != nullptr, strataInvalidArgument, "comm is NULL");
  STRATA_REQUIRE(hold.held(), strataInvalidArgument,
                 "comm %p is not a live communicator (destroyed, aborted, being destroyed, or never created)",
                 static_cast<void*>(comm));
  return Status::Ok();
}

Status checkComm(strataComm_t comm, const Hold& hold, bool collective) {
  STRATA_CHECK(checkHandle(comm, hold));
  STRATA_REQUIRE(!comm->aborted.load(), strataInvalidUsage, "the communicator was aborted");
  if (!comm->fatal.ok()) {
    // A collective on it answers a rank that refused a call since (it waits for every peer). Not a
    // query: it may come from a thread that MPI's thread level keeps out of MPI.
    if (collective) (void)comm->notices.poll();
    return Status(comm->fatal.code(), "the communicator is unusable after an earlier error: " + comm->fatal.message());
  }
  return Status::Ok();
}

namespace {

bool mulOverflows(size_t a, size_t b, size_t* out) { return __builtin_mul_overflow(a, b, out); }

}  // namespace

Status validate(strataComm* comm, CollectiveArgs* a, const void* send, const void* recv, BufferUse sendUse,
                BufferUse recvUse) {
  const int p = comm->size;
  const char* name = collectiveName(a->coll);
  STRATA_REQUIRE(isValidDataType(a->type), strataInvalidArgument, "invalid datatype %d", static_cast<int>(a->type));
  if (isReduction(a->coll)) {
    STRATA_REQUIRE(isValidRedOp(a->op), strataInvalidArgument, "invalid reduction op %d", static_cast<int>(a->op));
    STRATA_REQUIRE(!((a->coll == Collective::kScan || a->coll == Collective::kExscan) && a->op == strataAvg),
                   strataInvalidUsage, "%s with strataAvg is not defined (a prefix has no single divisor)", name);
  }
  if (isRooted(a->coll)) {
    STRATA_REQUIRE(a->root >= 0 && a->root < p, strataInvalidArgument, "root %d is not a rank of this %d-rank communicator",
                   a->root, p);
  }
  const size_t elem = a->elemSize();
  size_t bytes = 0;
  for (const BufferUse* u : {&sendUse, &recvUse}) {
    if (mulOverflows(u->elems, elem, &bytes) || bytes > static_cast<size_t>(PTRDIFF_MAX)) {
      return makeStatus(strataInvalidArgument, "%zu elements of %s overflow the addressable size", u->elems,
                        dataTypeName(a->type));
    }
  }
  if (sendUse.used && sendUse.elems > 0) {
    STRATA_REQUIRE(send != nullptr, strataInvalidArgument, "sendbuff is NULL with %zu elements to send", sendUse.elems);
  }
  if (recvUse.used && recvUse.elems > 0) {
    STRATA_REQUIRE(recv != nullptr, strataInvalidArgument, "recvbuff is NULL with %zu elements to receive", recvUse.elems);
  }
  const bool haveSend = sendUse.used && sendUse.elems > 0;
  const bool haveRecv = recvUse.used && recvUse.elems > 0;
  // Memory spaces: one per call. A significant buffer says where the call runs even when this rank
  // has no elements in it (a v-variant's zero count): the rank still joins its peers' plan, which
  // is built for their memory space (src/core/plan_agreement.h refuses a rank whose space differs).
  const bool spacedSend = sendUse.used && send != nullptr;
  const bool spacedRecv = recvUse.used && recv != nullptr;
  const MemorySpace sendSpace = spacedSend ? classifyPointer(send) : MemorySpace::kHost;
  const MemorySpace recvSpace = !spacedRecv ? MemorySpace::kHost : spacedSend && recv == send ? sendSpace : classifyPointer(recv);
  if (spacedSend && spacedRecv && sendSpace != recvSpace) {
    return makeStatus(strataInvalidArgument, "sendbuff is %s memory but recvbuff is %s memory (one space per call)",
                      memorySpaceName(sendSpace), memorySpaceName(recvSpace));
  }
  // Device buffers take the device path (src/core/device_path.h).
  a->device = (spacedSend && sendSpace == MemorySpace::kDevice) || (spacedRecv && recvSpace == MemorySpace::kDevice);
  // In place, or disjoint.
  a->inPlace = false;
  if (haveSend && haveRecv) {
    const InPlaceAlias rule = inPlaceAlias(*a, comm->rank);
    const size_t offsetBytes = rule.offset * elem;
    const char* s = static_cast<const char*>(send);
    const char* r = static_cast<const char*>(recv);
    const bool inPlace = rule.sendInsideRecv ? s == r + offsetBytes : r == s + offsetBytes;
    const size_t sendBytes = sendUse.elems * elem, recvBytes = recvUse.elems * elem;
    const bool overlap = s < r + recvBytes && r < s + sendBytes;
    if (inPlace) {
      a->inPlace = true;
    } else if (overlap) {
      return makeStatus(strataInvalidArgument,
                        "sendbuff and recvbuff overlap without being in place (in place, %s needs %s == %s + %zu bytes)",
                        name, rule.sendInsideRecv ? "sendbuff" : "recvbuff", rule.sendInsideRecv ? "recvbuff" : "sendbuff",
                        offsetBytes);
    }
  }
  return Status::Ok();
}

Status checkCountOverflow(const CollectiveArgs& a, int p) {
  size_t total = 0;
  if (!isValidDataType(a.type)) return Status::Ok();  // reported by validate()
  if (mulOverflows(a.count, static_cast<size_t>(p), &total) || mulOverflows(total, a.elemSize(), &total) ||
      total > static_cast<size_t>(PTRDIFF_MAX)) {
    return makeStatus(strataInvalidArgument, "count %zu of %s x %d ranks overflows the addressable size", a.count,
                      dataTypeName(a.type), p);
  }
  return Status::Ok();
}

strataResult_t runRegular(const char* function, strataComm_t comm, CollectiveArgs args, const void* send, void* recv,
                          cudaStream_t stream) {
  return collective(comm, function, [&](strataComm* c) -> Status {
    args.commSize = c->size;
    STRATA_CHECK(checkCountOverflow(args, c->size));
    STRATA_CHECK(validate(c, &args, send, recv, sendUse(args, c->rank), recvUse(args, c->rank)));
    if (args.count == 0 && args.coll != Collective::kBarrier) return Status::Ok();  // valid no-op, as NCCL
    return runCollective(c, args, send, recv, stream);
  });
}

}  // namespace strata::api
