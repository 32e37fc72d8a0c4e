// Copies into and out of a node team's shared slots (intra_node/node_team.cc).
#pragma once

#include <cstddef>

namespace strata {

// Copies into and out of the slots. A plain vector loop: glibc's memcpy picks `rep movsb` for these
// sizes, which ran at a fifth of the speed here when the lines had just been written (or read) by
// another core (2 GB/s against 10 GB/s on a 2-core EPYC VM, 64 KiB parts).
void copyLines(void* dst, const void* src, size_t bytes);

// Large pieces may go into the slots with streaming stores. A plain store must first take the line
// from the core that read it last round; on the 2-core EPYC VM that transfer alone ran at 2.5-4
// GB/s for minutes at a time (the host moves the VM's cores around), against 11-15 GB/s streamed,
// while in the machine's good spells plain stores made a 1 MiB allreduce 20% faster (the reader
// finds the lines in cache). Hence a choice per op, measured (NodeOpLayout); streamed lines never
// pay off for small pieces (16 KiB: the reader's 4.5 against 12 GB/s).
constexpr size_t kStreamMinBytes = 64 * 1024;
void copyIntoSlot(void* dst, const void* src, size_t bytes, bool stream);

}  // namespace strata
