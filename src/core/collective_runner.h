// Runs one validated collective call: picks the algorithm (tuner or STRATA_ALGO), builds or reuses
// the plan, binds the buffers and hands the plan to the executor.
#pragma once

#include "kernels/plan/collective.h"
#include "kernels/plan/plan_builder.h"
#include "src/core/communicator.h"

namespace strata {

Status runCollective(strataComm* comm, const CollectiveArgs& args, const void* send, void* recv, cudaStream_t stream);

// The plan this rank would run for `args` (built and cached on first use), left in
// comm->lastPlan, where it stays until the communicator's next call.
Status planFor(strataComm* comm, const CollectiveArgs& args);

}  // namespace strata
