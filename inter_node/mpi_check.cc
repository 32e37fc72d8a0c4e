#include "inter_node/mpi_check.h"

namespace strata {

std::string mpiErrorText(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) return strformat("MPI error %d", rc);
  return std::string(text, static_cast<size_t>(len));
}

Status mpiError(const char* call, int rc, const char* where) {
  return makeStatus(strataSystemError, "%s failed: %s (%s)", call, mpiErrorText(rc).c_str(), where);
}

}  // namespace strata
