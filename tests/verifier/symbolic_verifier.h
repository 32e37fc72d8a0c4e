// The symbolic plan verifier (test tier 1).
//
// Runs the plans of all p ranks of one collective call symbolically: every element of every
// buffer holds the set of ranks whose input it sums (a bitmask), which input element it came
// from, and whether the average's division was applied. Messages match like MPI's (source, tag,
// posting order) and complete only when both sides have posted them (rendezvous), so a plan that
// could deadlock does. Each rank's steps run in dependency order, and every access is checked
// against the plan's dependency graph: a read must be ordered after the write it reads, a write
// after every earlier access of the same elements. At the end every output element must hold
// exactly the contributions the collective defines, each once.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kernels/plan/collective.h"
#include "kernels/plan/plan.h"

namespace strata::verify {

struct Case {
  CollectiveArgs args;  // coll, count, op, root, shift, inPlace (commSize = p)
  int p = 1;
  std::vector<Plan> plans;  // one per rank
  // Arguments that differ between ranks (alltoallv's send side, v-variants' own counts); empty:
  // every rank has `args` (adjusted by rankArgs).
  std::vector<CollectiveArgs> perRank;
  const CollectiveArgs& argsOf(int rank) const;
};

struct Result {
  bool ok = true;
  std::string error;       // the first violation, naming the rank, step and element
  size_t totalSteps = 0;
  size_t messages = 0;
};

Result run(const Case& c);

// The call as `rank` makes it: in place only where the rank's own buffers alias (rooted
// collectives are in place at the root alone).
CollectiveArgs rankArgs(const CollectiveArgs& a, int rank);

// Where the call's input and output live on `rank`, after in-place aliasing: buffer and offset
// (from the collective table's in-place rule, kernels/plan/collective.h).
struct View {
  BufferId buffer;
  size_t offset;
};
View sendView(const CollectiveArgs& a, int rank);
View recvView(const CollectiveArgs& a, int rank);
// Elements of the send and receive buffers on `rank`, from the table (0 where the rank's buffer is
// not significant, but for exscan's rank 0, whose receive buffer must stay untouched).
size_t sendElems(const CollectiveArgs& a, int rank);
size_t recvElems(const CollectiveArgs& a, int rank);

}  // namespace strata::verify
