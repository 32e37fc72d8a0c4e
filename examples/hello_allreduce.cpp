// The smallest Strata program: sum a vector over all ranks with the C++ header.
//   mpiexec -n 4 ./hello_allreduce
#include <mpi.h>
#include <strata/strata.hpp>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    strata::Comm comm(MPI_COMM_WORLD);
    std::vector<float> x(1000, static_cast<float>(comm.rank() + 1));
    comm.allReduce(std::span<float>(x), strataSum);  // in place
    const float want = comm.size() * (comm.size() + 1) / 2.0f;
    if (comm.rank() == 0) std::printf("sum over %d ranks: %g (expected %g)\n", comm.size(), x[0], want);
    status = x[0] == want && x[999] == want ? 0 : 1;
  } catch (const strata::Error& e) {
    std::fprintf(stderr, "strata error %d: %s\n", static_cast<int>(e.code()), e.what());
    status = 2;
  }
  MPI_Finalize();
  return status;
}
