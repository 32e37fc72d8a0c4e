// Every rank checks, when it first builds a plan for a call, that all ranks built theirs for the
// same call in the same memory space and chose the same algorithm. A rank that passes device
// buffers while another passes host buffers (or a rank whose STRATA_ALGO, counts, allgatherv or
// reduce-scatterv receive counts, or root differ)
// would otherwise run a plan its peers do not: different messages, chunks and node ops, a hang or a
// wrong result. The check runs once per call shape (collective, count or those receive counts,
// type, op, root, memory space), at its first call, which every rank makes at the same point;
// later calls cost nothing.
#pragma once

#include <string>

#include "kernels/common/status.h"
#include "kernels/plan/collective.h"

struct strataComm;

namespace strata {

// Called when this rank builds a plan; collective over `comm` (its agreement communicator) at the
// first call of each shape, bounded by the communicator's timeout.
// strataInvalidUsage, naming a rank that differs and how, when the ranks disagree.
Status agreeOnPlan(strataComm* comm, const CollectiveArgs& args, const std::string& algorithm);

}  // namespace strata
