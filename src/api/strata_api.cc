// The C entry points. Each validates its arguments, returns a result code, and leaves the message
// for strataGetLastError; no exception, abort() or exit() crosses this boundary.
#include <strata/strata.h>

#include <chrono>
#include <thread>

#include "kernels/common/log.h"
#include "src/api/api_common.h"
#include "src/core/device_path.h"
#include "src/core/collective_runner.h"

using strata::Collective;
using strata::CollectiveArgs;
using strata::Status;

namespace strata::api {
extern thread_local std::string tlsLastError;
}  // namespace strata::api

namespace {

// Waits (bounded, not abortable: it is what an abort waits with) until no other thread is inside a
// call on `comm`.
Status waitIdle(strataComm_t comm, double seconds) {
  strata::WaitPolicy policy;
  policy.timeoutSeconds = seconds;
  return strata::waitUntil(policy, [&] { return comm->inFlight.load() == 0; },
                           [&] { return strata::strformat("%d calls in flight to end", comm->inFlight.load()); });
}

// `function`: `*out` (named `outName`) set to the field `field` of a usable communicator.
strataResult_t queryInt(strataComm_t comm, const char* function, const char* outName, int strataComm::*field, int* out) {
  return strata::api::noThrow(function, [&] {
    strata::api::Hold hold(comm);
    Status s = strata::api::checkComm(comm, hold);
    if (s.ok() && out == nullptr) s = strata::makeStatus(strataInvalidArgument, "%s is NULL", outName);
    if (s.ok()) *out = comm->*field;
    return strata::api::finish(hold.held() ? comm : nullptr, function, s);
  });
}

}  // namespace

extern "C" {

strataResult_t strataCommInitMpi(strataComm_t* comm, MPI_Comm mpiComm, const strataConfig_t* config) {
  return strata::api::noThrow("strataCommInitMpi", [&] {
    if (comm == nullptr) return strata::api::finish(nullptr, "strataCommInitMpi", strata::makeStatus(strataInvalidArgument, "comm (the output pointer) is NULL"));
    *comm = nullptr;
    const Status s = strata::api::guarded(nullptr, [&](strataComm_t) { return strata::createComm(mpiComm, config, comm); });
    return strata::api::finish(nullptr, "strataCommInitMpi", s);
  });
}

strataResult_t strataCommDestroy(strataComm_t comm) {
  return strata::api::noThrow("strataCommDestroy", [&] {
    if (comm == nullptr) return strata::api::finish(nullptr, "strataCommDestroy", strata::makeStatus(strataInvalidArgument, "comm is NULL"));
    switch (strata::claimTeardown(comm, nullptr)) {
      case strata::Teardown::kNotLive:
        return strata::api::finish(nullptr, "strataCommDestroy",
                                   strata::makeStatus(strataInvalidArgument, "comm %p is not a live communicator (destroyed twice?)",
                                                      static_cast<void*>(comm)));
      case strata::Teardown::kClaimedByAnother:
        return strata::api::finish(nullptr, "strataCommDestroy",
                                   strata::makeStatus(strataInvalidUsage, "comm %p is being destroyed or aborted by another call",
                                                      static_cast<void*>(comm)));
      case strata::Teardown::kClaimed: break;
    }
    Status s = waitIdle(comm, comm->config.timeoutSeconds);
    if (!s.ok()) {
      strata::unclaimTeardown(comm);
      return strata::api::finish(comm, "strataCommDestroy", s);
    }
    return strata::api::finish(nullptr, "strataCommDestroy", strata::destroyComm(comm));
  });
}

strataResult_t strataCommAbort(strataComm_t comm) {
  return strata::api::noThrow("strataCommAbort", [&] {
    if (comm == nullptr) return strata::api::finish(nullptr, "strataCommAbort", strata::makeStatus(strataInvalidArgument, "comm is NULL"));
    // Pending waits see the flag at their next poll and return; then the resources go. Raised under
    // the registry's lock, it also ends the waits of a teardown already under way, which then frees it.
    const strata::Teardown claim = strata::claimTeardown(comm, [](strataComm_t c) {
      c->aborted.store(true);
      strata::abortDevicePath(c);
    });
    if (claim == strata::Teardown::kNotLive) {
      return strata::api::finish(nullptr, "strataCommAbort",
                                 strata::makeStatus(strataInvalidArgument, "comm %p is not a live communicator",
                                                    static_cast<void*>(comm)));
    }
    if (claim == strata::Teardown::kClaimedByAnother) return strataSuccess;  // that call frees it
    Status s = waitIdle(comm, comm->config.timeoutSeconds);
    if (!s.ok()) {
      strata::unclaimTeardown(comm);
      return strata::api::finish(comm, "strataCommAbort", s);
    }
    try {
      strata::tellPeersOfAbort(comm);
    } catch (...) {
      // No host memory for the notices: the peers' waits for this rank end at their bound.
    }
    if (comm->nodeTeam != nullptr) comm->nodeTeam->markGone();
    return strata::api::finish(nullptr, "strataCommAbort", strata::destroyComm(comm));
  });
}

strataResult_t strataCommRefuseCall(strataComm_t comm, const char* reason) {
  bool refused = false;  // the call was numbered and refused (collective() tells the peers)
  const strataResult_t rc = strata::api::collective(comm, "strataCommRefuseCall", [&](strataComm*) -> Status {
    refused = true;
    return strata::makeStatus(strataInvalidArgument, "refused by the caller: %s", reason != nullptr ? reason : "(no reason given)");
  });
  return refused && rc == strataInvalidArgument ? strataSuccess : rc;
}

strataResult_t strataCommCount(strataComm_t comm, int* count) {
  return queryInt(comm, "strataCommCount", "count", &strataComm::size, count);
}

strataResult_t strataCommUserRank(strataComm_t comm, int* rank) {
  return queryInt(comm, "strataCommUserRank", "rank", &strataComm::rank, rank);
}

strataResult_t strataCommGetAsyncError(strataComm_t comm, strataResult_t* asyncError) {
  return strata::api::noThrow("strataCommGetAsyncError", [&] {
    strata::api::Hold hold(comm);
    Status s = strata::api::checkHandle(comm, hold);
    if (s.ok() && asyncError == nullptr) s = strata::makeStatus(strataInvalidArgument, "asyncError is NULL");
    if (!s.ok()) return strata::api::finish(hold.held() ? comm : nullptr, "strataCommGetAsyncError", s);
    // An abort under way (or one whose wait for the calls in flight ran out) leaves it unusable.
    if (comm->aborted.load()) {
      *asyncError = strataInvalidUsage;
      return strataSuccess;
    }
    // The error that left it unusable: failComm recorded its message before the code.
    const int fatal = comm->fatalCode.load(std::memory_order_acquire);
    if (fatal != strataSuccess) {
      *asyncError = static_cast<strataResult_t>(fatal);
      return strataSuccess;
    }
    // The device's work, then the peers' word (a peer that failed or aborted while this rank is idle).
    Status async = strata::deviceAsyncError(comm);
    if (async.ok()) async = strata::peersAsyncError(comm);
    if (!async.ok()) {
      // Recorded once per error, not at every poll (a watchdog polls; nor is it logged): a message the
      // caller's own call records after it stays.
      const std::string message = "strataCommGetAsyncError: " + async.message();
      std::lock_guard<std::mutex> lock(comm->errorMutex);
      if (comm->asyncReported != message) comm->lastError = comm->asyncReported = message;
    }
    *asyncError = async.code();
    return strataSuccess;
  });
}

const char* strataCommLastAlgorithm(strataComm_t comm) {
  try {
    strata::api::Hold hold(comm);
    if (!strata::api::checkComm(comm, hold).ok()) return "";
    if (comm->lastPeerAlgorithm != nullptr) return comm->lastPeerAlgorithm;  // a single-kernel node collective
    return comm->lastPlan != nullptr ? comm->lastPlan->plan.algorithm.c_str() : "";  // the last call's plan
  } catch (...) {
    return "";  // no host memory for checkComm's message
  }
}

const char* strataGetErrorString(strataResult_t result) { return strata::resultString(result); }

const char* strataGetLastError(strataComm_t comm) {
  thread_local std::string copy;
  try {
    strata::api::Hold hold(comm);
    if (hold.held()) {
      std::lock_guard<std::mutex> lock(comm->errorMutex);
      copy = comm->lastError;
    } else {
      copy = strata::api::tlsLastError;
    }
    return copy.c_str();
  } catch (...) {
    return strata::api::kNoHostMemory;  // no host memory for the copy
  }
}

strataResult_t strataAllReduce(const void* sendbuff, void* recvbuff, size_t count, strataDataType_t datatype,
                               strataRedOp_t op, strataComm_t comm, cudaStream_t stream) {
  return strata::api::runRegular("strataAllReduce", comm, strata::api::makeArgs(Collective::kAllReduce, count, datatype, op, 0),
                                 sendbuff, recvbuff, stream);
}

strataResult_t strataBroadcast(const void* sendbuff, void* recvbuff, size_t count, strataDataType_t datatype, int root,
                               strataComm_t comm, cudaStream_t stream) {
  return strata::api::runRegular("strataBroadcast", comm, strata::api::makeArgs(Collective::kBroadcast, count, datatype, strataSum, root),
                                 sendbuff, recvbuff, stream);
}

strataResult_t strataReduce(const void* sendbuff, void* recvbuff, size_t count, strataDataType_t datatype,
                            strataRedOp_t op, int root, strataComm_t comm, cudaStream_t stream) {
  return strata::api::runRegular("strataReduce", comm, strata::api::makeArgs(Collective::kReduce, count, datatype, op, root), sendbuff,
                                 recvbuff, stream);
}

strataResult_t strataAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, strataDataType_t datatype,
                               strataComm_t comm, cudaStream_t stream) {
  return strata::api::runRegular("strataAllGather", comm, strata::api::makeArgs(Collective::kAllGather, sendcount, datatype, strataSum, 0),
                                 sendbuff, recvbuff, stream);
}

strataResult_t strataReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, strataDataType_t datatype,
                                   strataRedOp_t op, strataComm_t comm, cudaStream_t stream) {
  return strata::api::runRegular("strataReduceScatter", comm, strata::api::makeArgs(Collective::kReduceScatter, recvcount, datatype, op, 0),
                                 sendbuff, recvbuff, stream);
}

strataResult_t strataGather(const void* sendbuff, void* recvbuff, size_t sendcount, strataDataType_t datatype, int root,
                            strataComm_t comm, cudaStream_t stream) {
  return strata::api::runRegular("strataGather", comm, strata::api::makeArgs(Collective::kGather, sendcount, datatype, strataSum, root),
                                 sendbuff, recvbuff, stream);
}

strataResult_t strataScatter(const void* sendbuff, void* recvbuff, size_t recvcount, strataDataType_t datatype, int root,
                             strataComm_t comm, cudaStream_t stream) {
  return strata::api::runRegular("strataScatter", comm, strata::api::makeArgs(Collective::kScatter, recvcount, datatype, strataSum, root),
                                 sendbuff, recvbuff, stream);
}

strataResult_t strataAlltoAll(const void* sendbuff, void* recvbuff, size_t count, strataDataType_t datatype,
                              strataComm_t comm, cudaStream_t stream) {
  return strata::api::runRegular("strataAlltoAll", comm, strata::api::makeArgs(Collective::kAllToAll, count, datatype, strataSum, 0),
                                 sendbuff, recvbuff, stream);
}

strataResult_t strataScan(const void* sendbuff, void* recvbuff, size_t count, strataDataType_t datatype, strataRedOp_t op,
                          strataComm_t comm, cudaStream_t stream) {
  return strata::api::runRegular("strataScan", comm, strata::api::makeArgs(Collective::kScan, count, datatype, op, 0), sendbuff,
                                 recvbuff, stream);
}

strataResult_t strataExscan(const void* sendbuff, void* recvbuff, size_t count, strataDataType_t datatype,
                            strataRedOp_t op, strataComm_t comm, cudaStream_t stream) {
  return strata::api::runRegular("strataExscan", comm, strata::api::makeArgs(Collective::kExscan, count, datatype, op, 0), sendbuff,
                                 recvbuff, stream);
}

strataResult_t strataShift(const void* sendbuff, void* recvbuff, size_t count, strataDataType_t datatype, int shift,
                           strataComm_t comm, cudaStream_t stream) {
  CollectiveArgs a = strata::api::makeArgs(Collective::kShift, count, datatype, strataSum, 0);
  a.shift = shift;
  return strata::api::runRegular("strataShift", comm, a, sendbuff, recvbuff, stream);
}

strataResult_t strataBarrier(strataComm_t comm, cudaStream_t stream) {
  return strata::api::runRegular("strataBarrier", comm, strata::api::makeArgs(Collective::kBarrier, 0, strataUint8, strataSum, 0),
                                 nullptr, nullptr, stream);
}

}  // extern "C"
