// Fibers: the simulated threads of a block share one OS thread and switch only where CUDA lets a
// thread wait for others (__syncthreads, warp intrinsics, __nanosleep). A switch saves and
// restores the callee-saved registers: on x86-64 a few instructions, where swapcontext would also
// make a system call for the signal mask.
#pragma once

#include <cstddef>

namespace cuda_sim {

// Saves the current stack pointer into *from and continues on the stack `to`.
extern "C" void cuda_sim_fiber_switch(void** from, void* to);

// Prepares `stack` (`bytes`, 16-byte aligned) so that switching to the returned stack pointer
// calls entry(arg) on it. entry must never return: it switches away for the last time instead.
void* prepareFiber(char* stack, size_t bytes, void (*entry)(void*), void* arg);

}  // namespace cuda_sim
