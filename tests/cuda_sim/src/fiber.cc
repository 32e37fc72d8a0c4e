#include "fiber.h"

#include <cstdint>

#if !defined(__x86_64__)
#error "the CUDA simulator's fibers are written for x86-64 (System V); add the switch for this architecture"
#endif

// System V x86-64: rbx, rbp, r12-r15, the SSE control word (MXCSR) and the x87 control word are
// callee-saved; everything else the caller of the switch has already given up.
asm(R"(
  .text
  .globl cuda_sim_fiber_switch
  .type cuda_sim_fiber_switch, @function
cuda_sim_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size cuda_sim_fiber_switch, .-cuda_sim_fiber_switch

  .globl cuda_sim_fiber_start
  .type cuda_sim_fiber_start, @function
cuda_sim_fiber_start:
  movq %r12, %rdi
  callq *%r13
  ud2
  .size cuda_sim_fiber_start, .-cuda_sim_fiber_start
)");

extern "C" void cuda_sim_fiber_start();

namespace cuda_sim {

void* prepareFiber(char* stack, size_t bytes, void (*entry)(void*), void* arg) {
  const uintptr_t top = (reinterpret_cast<uintptr_t>(stack) + bytes) & ~uintptr_t{15};
  // The frame cuda_sim_fiber_switch pops: control words, r15, r14, r13, r12, rbx, rbp, return
  // address. The return address sits at 8 mod 16, so the start routine calls with rsp aligned.
  auto* frame = reinterpret_cast<uint64_t*>(top - 24 - 7 * 8);
  frame[0] = 0x1F80u | (uint64_t{0x037F} << 32);  // default MXCSR and x87 control word
  frame[1] = 0;                                    // r15
  frame[2] = 0;                                    // r14
  frame[3] = reinterpret_cast<uint64_t>(entry);    // r13
  frame[4] = reinterpret_cast<uint64_t>(arg);      // r12
  frame[5] = 0;                                    // rbx
  frame[6] = 0;                                    // rbp
  frame[7] = reinterpret_cast<uint64_t>(&cuda_sim_fiber_start);
  return frame;
}

}  // namespace cuda_sim
