// The collectives as strata-perf runs them, as nccl-tests has them: how a sweep size maps to
// counts and buffers and the bus-bandwidth factor (both from the collective table,
// kernels/plan/collective.h), how to fill inputs and check outputs, and how to run it with Strata
// and with the MPI library's own collective.
#pragma once

#include <mpi.h>
#include <strata/strata.h>

#include <string>
#include <vector>

#include "kernels/plan/collective.h"

namespace strata::perf {

// Buffers and counts of one call on one rank.
struct CallShape {
  size_t count = 0;        // the API's count argument
  size_t sendElems = 0;    // elements of the send buffer
  size_t recvElems = 0;    // elements of the receive buffer
  size_t reportedBytes = 0;   // the "size" column (nccl-tests: the larger buffer)
  size_t reportedCount = 0;   // the "count" column
};

struct CallArgs {
  strataDataType_t type = strataFloat32;
  strataRedOp_t op = strataSum;
  int root = 0;
  int shift = 1;
  bool inPlace = false;
};

// A regular collective of the table (kernels/plan/collective.h) as strata-perf runs it.
struct CollectiveDescriptor {
  Collective coll;
  const char* name;
  bool hasOp;
  bool hasRoot;
  // nccl-tests' bus bandwidth factor: busbw = algbw * busFactor(n).
  double busFactor(int n) const { return specOf(coll).busFactor(n); }
  // The call for sweep size `bytes` (nccl-tests: the larger buffer) on n ranks.
  CallShape shape(size_t bytes, size_t elemSize, int n) const;
};

const std::vector<CollectiveDescriptor>& collectiveDescriptors();
const CollectiveDescriptor* findDescriptor(const std::string& name);

// The buffers of one rank for one call: allocated once at the largest size.
struct Buffers {
  void* send = nullptr;
  void* recv = nullptr;
  std::vector<unsigned char> expected;  // this rank's expected output (recvElems)
};

// Where the call's send and receive pointers point for in-place calls.
void callPointers(const CollectiveDescriptor& d, const CallShape& s, const CallArgs& a, int rank, size_t elemSize,
                  Buffers& b, const void** send, void** recv);
// Fills this rank's inputs (seeded) and computes its expected output.
void prepareCheck(const CollectiveDescriptor& d, const CallShape& s, const CallArgs& a, int rank, int n, unsigned seed,
                  Buffers& b);
// Number of wrong elements in this rank's output (0 where the rank has no output).
size_t countWrong(const CollectiveDescriptor& d, const CallShape& s, const CallArgs& a, int rank, int n, Buffers& b,
                  bool mpiInPlaceLayout);

strataResult_t runStrata(const CollectiveDescriptor& d, const CallShape& s, const CallArgs& a, const void* send,
                         void* recv, strataComm_t comm, cudaStream_t stream);
// The MPI library's own collective; returns false (and why) where MPI cannot express the call.
bool mpiSupports(const CollectiveDescriptor& d, const CallArgs& a, std::string* why);
// kMpi calls MPI_Allreduce etc., whatever defines them in the process (the MPI face, when it is
// preloaded); kProfiling calls PMPI_Allreduce etc., always the MPI library's own.
enum class MpiNames { kMpi, kProfiling };
int runMpi(const CollectiveDescriptor& d, const CallShape& s, const CallArgs& a, const void* send, void* recv,
           MPI_Comm comm, int rank, size_t elemSize, MpiNames names);
// MPI's in-place reduce-scatter leaves the result at the start of the buffer, not at the rank's block.
bool mpiMovesInPlaceResult(const CollectiveDescriptor& d);

}  // namespace strata::perf
