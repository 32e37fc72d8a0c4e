#include "intra_node/node_op_layout.h"

#include <algorithm>

#include "intra_node/slot_copies.h"

namespace strata {

void layoutRound(const NodeOpDesc& d, int j, size_t C, size_t c, size_t es, std::vector<size_t>* offs) {
  offs->assign(d.writeCounts[static_cast<size_t>(j)].size(), 0);
  size_t pos = 0;
  for (size_t i = 0; i < offs->size(); ++i) {
    if (!d.writeShared[static_cast<size_t>(j)][i]) continue;
    size_t off, cnt;
    partOf(d.writeCounts[static_cast<size_t>(j)][i], C, c, &off, &cnt);
    (*offs)[i] = pos;
    pos += alignUp(cnt * es, kSlotAlign);
  }
}

size_t maxSharedBytes(const NodeOpDesc& d, size_t es) {
  const int n = static_cast<int>(d.members.size());
  // Bytes each member puts into its slot, and the slot size this op wants.
  size_t maxShared = 0;
  for (int j = 0; j < n; ++j) {
    size_t total = 0;
    for (size_t i = 0; i < d.writeCounts[static_cast<size_t>(j)].size(); ++i) {
      if (d.writeShared[static_cast<size_t>(j)][i]) total += alignUp(d.writeCounts[static_cast<size_t>(j)][i] * es, kSlotAlign);
    }
    maxShared = std::max(maxShared, total);
  }
  return maxShared;
}

Status buildNodeOpLayout(const NodeOpDesc& d, int me, size_t es, size_t slotBytes, bool device, NodeOpLayout* out) {
  const int n = static_cast<int>(d.members.size());
  NodeOpLayout* layout = out;
  layout->elemSize = es;
  layout->slotBytes = slotBytes;
  const size_t maxShared = maxSharedBytes(d, es);
  // Rounds: the fewest in which every member's parts fit its slot.
  size_t C = std::max<size_t>(1, (maxShared + slotBytes - 1) / slotBytes);
  auto fits = [&](size_t rounds) {
    for (int j = 0; j < n; ++j) {
      size_t used = 0;
      for (size_t i = 0; i < d.writeCounts[static_cast<size_t>(j)].size(); ++i) {
        if (!d.writeShared[static_cast<size_t>(j)][i]) continue;
        size_t off, cnt;
        partOf(d.writeCounts[static_cast<size_t>(j)][i], rounds, 0, &off, &cnt);  // part 0 is the largest
        used += alignUp(cnt * es, kSlotAlign);
      }
      if (used > slotBytes) return false;
    }
    return true;
  };
  while (!fits(C)) ++C;
  layout->rounds = C;
  for (size_t i = 0; i < d.writes.size(); ++i) {
    if (!device && d.writeShared[static_cast<size_t>(me)][i] && d.writes[i].count * es / C >= kStreamMinBytes) {
      layout->largePieces = true;
    }
  }
  for (size_t i = 0; i < d.writes.size(); ++i) layout->sharesAnything |= d.writeShared[static_cast<size_t>(me)][i] != 0;
  std::vector<uint8_t> readsFrom(static_cast<size_t>(n), 0);
  for (const NodeRead& r : d.reads) {
    STRATA_REQUIRE(!r.sources.empty(), strataInternalError, "%s: a read without sources", d.what);
    for (const NodePiece& src : r.sources) {
      STRATA_REQUIRE(src.member < static_cast<uint32_t>(n) && src.index < d.writeCounts[src.member].size() &&
                         d.writeCounts[src.member][src.index] == r.dst.count &&
                         (src.member == static_cast<uint32_t>(me) || d.writeShared[src.member][src.index]),
                     strataInternalError, "%s: read of %zu elements from piece %u of member %u does not match", d.what,
                     r.dst.count, src.index, src.member);
      if (src.member != static_cast<uint32_t>(me)) readsFrom[src.member] = 1;
    }
  }
  for (int j = 0; j < n; ++j) {
    if (j == me) continue;
    if (readsFrom[static_cast<size_t>(j)]) layout->readFrom.push_back(j);
    if (readsFrom[static_cast<size_t>(j)] || d.fullSync) layout->waitFor.push_back(j);
  }
  if (C == 1) {
    layout->offsets.resize(static_cast<size_t>(n));
    for (int j = 0; j < n; ++j) layoutRound(d, j, 1, 0, es, &layout->offsets[static_cast<size_t>(j)]);
    // Inline when every member's pieces, packed, fit its lines (offsets count line data bytes),
    // for teams small enough to stage everyone's lines on the stack.
    layout->inlined = !device && n <= static_cast<int>(kMaxInlineMembers);
    layout->inlineLinesOf.assign(static_cast<size_t>(n), 1);
    for (int j = 0; j < n && layout->inlined; ++j) {
      size_t pos = 0;
      for (size_t i = 0; i < d.writeCounts[static_cast<size_t>(j)].size(); ++i) {
        if (!d.writeShared[static_cast<size_t>(j)][i]) continue;
        layout->offsets[static_cast<size_t>(j)][i] = pos;
        pos += d.writeCounts[static_cast<size_t>(j)][i] * es;
      }
      layout->inlined = pos <= kInlineBytes;
      layout->inlineLinesOf[static_cast<size_t>(j)] = std::max<size_t>(1, (pos + kLineData - 1) / kLineData);
    }
    if (!layout->inlined) {
      for (int j = 0; j < n; ++j) layoutRound(d, j, 1, 0, es, &layout->offsets[static_cast<size_t>(j)]);
    }
  }
  return Status::Ok();
}

}  // namespace strata
