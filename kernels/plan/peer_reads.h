// What a plan writes where a peer has read: between processes of one host an MPI library moves a
// large message with one copy, the receiver reading the sender's buffer directly, and the lines it
// read stay in the receiver's core's cache; when the sender next writes them, each write has to
// take its line back (LinkCost::rewrite prices the byte). An algorithm that reduces into a block
// and then sends it (a ring allreduce's own block), forwards what it received, or reduces in place
// into the buffer its peer read pays it on every call; one that sends only from the user's send
// buffer, which it never writes, does not.
#pragma once

#include <cstddef>
#include <vector>

#include "kernels/plan/cost.h"
#include "kernels/plan/plan.h"

namespace strata {

// Bytes written where a peer read, by how they are written: by a reduction, which reads each line
// before it writes it (a reduce step, a division, a node op's output of several pieces), or by a
// copy, which overwrites it (a copy within the rank, a message received, a node op's output of one
// piece). LinkCost::rewrite and LinkCost::copyRewrite price them.
struct RewrittenBytes {
  double reduced = 0, copied = 0;
  double total() const { return reduced + copied; }
  double seconds(const LinkCost& c) const { return reduced * c.rewrite + copied * c.rewriteOfACopy(); }
  RewrittenBytes& operator+=(const RewrittenBytes& o) {
    reduced += o.reduced;
    copied += o.copied;
    return *this;
  }
};

// Per step of `plan` (one rank's), the bytes it writes into parts of the rank's buffers that a
// peer read by one of the plan's sends since the rank last wrote them, in the steady state of
// repeated calls (a send late in one call marks what the next call's early writes pay for). Steps
// are taken in plan order. A node op's outputs count as writes; its pieces go through the node
// team's own slots (their costs are the node level's).
std::vector<RewrittenBytes> rewrittenBytesPerStep(const Plan& plan, size_t elemSize);
// Their sum over the plan.
RewrittenBytes rewrittenBytes(const Plan& plan, size_t elemSize);

}  // namespace strata
