// The reference oracle of strata-perf's correctness check and of the MPI tests: seeded inputs and
// the expected results, computed here independently of the library's kernels and algorithms.
#pragma once

#include <strata/strata.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace strata::test {

size_t typeSize(strataDataType_t t);
const char* typeName(strataDataType_t t);
const char* opName(strataRedOp_t op);
bool isFloat(strataDataType_t t);

// Small integer-valued inputs, chosen per op so that every partial result is exact in every type
// (in floats sums are small whole numbers and products powers of two; integers wrap, exactly in
// any order): any reduction order gives the same bits.
double inputValue(strataDataType_t t, strataRedOp_t op, int rank, size_t i, unsigned seed);
void writeValue(strataDataType_t t, void* buf, size_t i, double v);
double readValue(strataDataType_t t, const void* buf, size_t i);
// Fills n elements of rank `rank`'s input starting at element index `first`.
void fillInput(strataDataType_t t, strataRedOp_t op, int rank, void* buf, size_t first, size_t n, unsigned seed);
// The reduction of element i over ranks 0..p-1 with the library's defined semantics: integers
// wrap, avg = sum / p computed in the accumulation type (truncating for integers).
double reduceReference(strataDataType_t t, strataRedOp_t op, int p, size_t i, unsigned seed, int firstRank = 0);
// reduceReference over ranks [firstRank, lastRank] (scan), without the avg division.
double reduceRange(strataDataType_t t, strataRedOp_t op, int firstRank, int lastRank, size_t i, unsigned seed);
// Elements [first, first + n) of reduceReference over ranks 0..p-1, stored into buf[0..n) as
// writeValue stores them: the expected result of an allreduce (first 0) or of one rank's block.
// Exact in every type at any rank count, where the doubles above hold the 64-bit types' values
// exactly only below 2^53 (their products over more than some 33 ranks).
void fillReduced(strataDataType_t t, strataRedOp_t op, int p, void* buf, size_t first, size_t n, unsigned seed);

// A buffer with guard zones on both sides, to catch writes out of bounds.
class GuardedBuffer {
 public:
  GuardedBuffer(size_t bytes, unsigned char fill = 0xCD);
  void* data() { return storage_.data() + kGuard; }
  const void* data() const { return storage_.data() + kGuard; }
  size_t bytes() const { return bytes_; }
  bool guardsIntact() const;
  void fill(unsigned char byte);
  // The whole allocation, guards included (to mirror it elsewhere, e.g. into device memory).
  unsigned char* whole() { return storage_.data(); }
  size_t wholeBytes() const { return storage_.size(); }

 private:
  static constexpr size_t kGuard = 64;
  std::vector<unsigned char> storage_;
  size_t bytes_;
};

// Compares n elements of `got` with `want` (bytes); returns "" or a description of the first
// mismatch and the number of wrong elements.
std::string compareElements(strataDataType_t t, const void* got, const void* want, size_t n);

}  // namespace strata::test
