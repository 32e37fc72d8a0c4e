// Entry points whose collectives are not implemented yet. They check their communicator and
// return strataInvalidUsage with "not implemented yet", so callers get an honest answer.
#include <strata/strata.h>

#include "src/api/api_common.h"

namespace {

strataResult_t notYet(const char* function, strataComm_t comm) {
  return strata::api::call(comm, function, [&](strataComm*) -> strata::Status {
    return strata::makeStatus(strataInvalidUsage, "not implemented yet");
  });
}

}  // namespace

extern "C" {

strataResult_t strataGather(const void*, void*, size_t, strataDataType_t, int, strataComm_t comm, cudaStream_t) {
  return notYet("strataGather", comm);
}
strataResult_t strataScatter(const void*, void*, size_t, strataDataType_t, int, strataComm_t comm, cudaStream_t) {
  return notYet("strataScatter", comm);
}
strataResult_t strataAlltoAll(const void*, void*, size_t, strataDataType_t, strataComm_t comm, cudaStream_t) {
  return notYet("strataAlltoAll", comm);
}
strataResult_t strataScan(const void*, void*, size_t, strataDataType_t, strataRedOp_t, strataComm_t comm, cudaStream_t) {
  return notYet("strataScan", comm);
}
strataResult_t strataExscan(const void*, void*, size_t, strataDataType_t, strataRedOp_t, strataComm_t comm, cudaStream_t) {
  return notYet("strataExscan", comm);
}
strataResult_t strataShift(const void*, void*, size_t, strataDataType_t, int, strataComm_t comm, cudaStream_t) {
  return notYet("strataShift", comm);
}

}  // extern "C"
