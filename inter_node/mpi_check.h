// Error checking for MPI calls: the message names the call, the MPI error string and file:line.
#pragma once

#include <mpi.h>

#include "kernels/common/status.h"

namespace strata {

std::string mpiErrorText(int rc);
Status mpiError(const char* call, int rc, const char* where);

}  // namespace strata

#define STRATA_CHECK_MPI(call)                                                 \
  do {                                                                         \
    const int strata_mpi_rc_ = (call);                                         \
    if (strata_mpi_rc_ != MPI_SUCCESS) return ::strata::mpiError(#call, strata_mpi_rc_, STRATA_WHERE); \
  } while (0)
