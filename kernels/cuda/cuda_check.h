// Error checking for CUDA calls, as inter_node/mpi_check.h does for MPI: the message names the
// call, CUDA's error name and string, and file:line.
#pragma once

#include <cuda_runtime.h>

#include "kernels/common/status.h"

namespace strata {

inline Status cudaCheck(cudaError_t rc, const char* call, const char* where) {
  if (rc == cudaSuccess) return Status::Ok();
  return makeStatus(strataUnhandledCudaError, "%s: %s (%s) at %s", call, cudaGetErrorString(rc), cudaGetErrorName(rc),
                    where);
}

}  // namespace strata

#define STRATA_CHECK_CUDA(call) STRATA_CHECK(::strata::cudaCheck((call), #call, STRATA_WHERE))
