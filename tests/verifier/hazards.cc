// Hazard tracking: every read must see its slice written by a step it follows, every write must
// not race a read or a write it does not follow.
#include "tests/verifier/simulator.h"

namespace strata::verify::detail {

bool Simulator::isAncestor(const RankState& st, StepId a, StepId b) const {
  return (st.ancestors[b][a / 64] >> (a % 64)) & 1;
}

Buffer* Simulator::bufferFor(int r, StepId s, const Slice& slice, bool write) {
  RankState& st = ranks_[static_cast<size_t>(r)];
  Buffer& b = st.buf[static_cast<int>(slice.buffer)];
  if (slice.end() > b.cells.size()) {
    fail("rank %d %s: %s[%zu,+%zu] is outside the buffer (%zu elements)", r, st.plan->describe(s, a_.type).c_str(),
         bufferName(slice.buffer), slice.offset, slice.count, b.cells.size());
    return nullptr;
  }
  if (write && slice.buffer == BufferId::kSend &&
      (slice.offset < st.sendWritableBegin || slice.end() > st.sendWritableEnd) && slice.count != 0) {
    fail("rank %d %s writes the caller's send buffer", r, st.plan->describe(s, a_.type).c_str());
    return nullptr;
  }
  return &b;
}

bool Simulator::read(int r, StepId s, const Slice& slice, std::vector<Cell>* out) {
  RankState& st = ranks_[static_cast<size_t>(r)];
  Buffer* b = bufferFor(r, s, slice, false);
  if (b == nullptr) return false;
  out->resize(slice.count);
  for (size_t i = 0; i < slice.count; ++i) {
    const size_t e = slice.offset + i;
    const Cell& cell = b->cells[e];
    if (!cell.defined()) {
      fail("rank %d %s reads %s[%zu] before it is written", r, st.plan->describe(s, a_.type).c_str(),
           bufferName(slice.buffer), e);
      return false;
    }
    const StepId w = b->lastWriter[e];
    if (w != kNoStep && !isAncestor(st, w, s)) {
      fail("rank %d %s reads %s[%zu] written by step %u without depending on it", r,
           st.plan->describe(s, a_.type).c_str(), bufferName(slice.buffer), e, w);
      return false;
    }
    b->readers[e].push_back(s);
    (*out)[i] = cell;
  }
  return true;
}

bool Simulator::write(int r, StepId s, const Slice& slice, const std::vector<Cell>& data) {
  RankState& st = ranks_[static_cast<size_t>(r)];
  Buffer* b = bufferFor(r, s, slice, true);
  if (b == nullptr) return false;
  for (size_t i = 0; i < slice.count; ++i) {
    const size_t e = slice.offset + i;
    const StepId w = b->lastWriter[e];
    if (w != kNoStep && w != s && !isAncestor(st, w, s)) {
      fail("rank %d %s overwrites %s[%zu] written by step %u without depending on it", r,
           st.plan->describe(s, a_.type).c_str(), bufferName(slice.buffer), e, w);
      return false;
    }
    for (StepId rd : b->readers[e]) {
      if (rd != s && !isAncestor(st, rd, s)) {
        fail("rank %d %s overwrites %s[%zu] that step %u reads without depending on it", r,
             st.plan->describe(s, a_.type).c_str(), bufferName(slice.buffer), e, rd);
        return false;
      }
    }
    b->cells[e] = data[i];
    b->lastWriter[e] = s;
    b->readers[e].clear();
  }
  return true;
}

}  // namespace strata::verify::detail
