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
// finds the lines in cache). Hence a choice per op, measured (NodeOpLayout), from 8 KiB pieces up:
// with the choice starting at 64 KiB, a 2-rank node allgather or reduce-scatter of 64 KiB took
// 13 us against 6.8 us with it from 8 KiB (pieces of 32 KiB: 5 against 9.6 GB/s), and 2-rank
// allreduce at 8 - 32 KiB measured 0.94x - 3.0x of MPI_Allreduce over interleaved runs, against
// 1.5x - 3.6x with it (2026-11-25, the 2-core VM; medians alike, the bad spells gone).
constexpr size_t kStreamMinBytes = 8 * 1024;
void copyIntoSlot(void* dst, const void* src, size_t bytes, bool stream);

}  // namespace strata
