// PackedBlocks: one rank's blocks of a collective that only moves data, as Strata moves them: bytes
// back to back. With a contiguous datatype they are the user's own memory (block i at displacement
// i, in the datatype's extents, from the buffer); with any other datatype they are packed into a
// staging buffer before the call (PMPI_Pack) and unpacked after it (PMPI_Unpack), so every rank
// serves the call whatever datatype it passes: MPI lets ranks pass different datatypes of the same
// type signature, and a decision to hand the call to the MPI library that only some ranks took
// would leave the others waiting. This relies on MPI packing a type map as its plain bytes, which
// packsAsPlainBytes() checks once (src/mpi_face/mpi_types.h).
//
// Device memory with a non-contiguous datatype is packed through a host copy of the span its blocks
// cover, into a staging buffer in device memory, so the call stays in one memory space on every rank.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <new>
#include <string>
#include <vector>

#include "src/mpi_face/face.h"

namespace strata::mpi_face {

class PackedBlocks {
 public:
  PackedBlocks() = default;
  PackedBlocks(const PackedBlocks&) = delete;
  PackedBlocks& operator=(const PackedBlocks&) = delete;
  ~PackedBlocks();

  // counts[i] elements of `type` at displs[i] extents from `base`, i < `blocks` (a v-variant's
  // arrays, as MPI passes them). False (and error()) when the arrays are missing or a count is
  // negative, when the datatype is invalid or its layout cannot be staged (an element over 2 GiB),
  // or when this rank has no memory for them.
  bool describe(const void* base, const int* counts, const int* displs, int blocks, MPI_Datatype type);
  // `blocks` blocks of `count` elements each, block i at i * count extents (a regular collective's
  // buffer; one block: a rooted call's own part). Allocates nothing when the datatype is contiguous.
  bool describe(const void* base, size_t blocks, int64_t count, MPI_Datatype type);

  // Where the blocks are for Strata: block i is bytes(i) bytes at data() + offset(i).
  char* data() const { return data_; }
  size_t offset(size_t i) const { return uniform_ ? i * uniformStride_ : offsets_[i]; }
  size_t bytes(size_t i) const { return uniform_ ? uniformBytes_ : bytes_[i]; }
  char* block(size_t i) const { return data_ + offset(i); }
  // Every block's bytes and offsets as arrays (the v-variants' arguments; describe() with arrays).
  const std::vector<size_t>& offsets() const { return offsets_; }
  const std::vector<size_t>& bytes() const { return bytes_; }
  bool staged() const { return staged_; }

  // Before the call: blocks [first, last) of the user's buffer into the staging (nothing to do
  // when the blocks are the user's memory).
  bool packIn(size_t first, size_t last);
  bool packIn() { return packIn(0, blocks_); }
  // After the call (and after a device call has completed): every block back into the user's buffer.
  bool unpackOut();

  // Why packing or unpacking failed, and the MPI error class that failure belongs to.
  const std::string& error() const { return error_; }
  int errorClass() const { return errorClass_; }
  // The failure is a legal datatype the face cannot pack (an element over 2 GiB): MPI serves the call.
  bool beyondPacking() const { return beyondPacking_; }
  // Whether it failed for want of this rank's resources (memory, CUDA, MPI_Pack), not for its
  // arguments (an invalid datatype, an element over 2 GiB, missing arrays or a negative count:
  // the MPI library is handed those).
  bool lacksResources() const {
    return errorClass_ != MPI_SUCCESS && errorClass_ != MPI_ERR_TYPE && errorClass_ != MPI_ERR_COUNT &&
           errorClass_ != MPI_ERR_ARG;
  }

 private:
  bool fail(int errorClass, std::string message);
  bool stageSpan(bool fromDevice);  // host copy of the user's span (device memory only)
  bool flushSpan();

  bool stage(const struct Layout& layout);  // sets up the staging once the blocks are known
  // Packs (or unpacks) block i between the user's memory (`user` addresses it as base_ does) and
  // the host staging, in pieces of whole elements of at most INT_MAX bytes (MPI_Pack's int).
  bool movePieces(size_t i, char* user, bool pack);
  int64_t count(size_t i) const { return uniform_ ? uniformCount_ : counts_[i]; }
  int64_t displ(size_t i) const { return uniform_ ? static_cast<int64_t>(i) * uniformCount_ : displs_[i]; }

  char* base_ = nullptr;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  MPI_Aint extent_ = 0;
  size_t elementBytes_ = 0;  // staged blocks: bytes of data in one element
  size_t blocks_ = 0;
  bool uniform_ = false;  // blocks of uniformCount_ elements, uniformStride_ bytes apart in data()
  int64_t uniformCount_ = 0;
  size_t uniformBytes_ = 0, uniformStride_ = 0;
  std::vector<int64_t> counts_, displs_;  // irregular blocks only
  std::vector<size_t> offsets_, bytes_;
  char* data_ = nullptr;
  bool staged_ = false;
  bool device_ = false;                 // the user's buffer is device memory
  std::vector<char> hostPacked_;        // the staging in host memory
  std::vector<char> hostSpan_;          // device memory only: the user's span, copied to the host
  MPI_Aint spanBegin_ = 0, spanEnd_ = 0;  // relative to base_
  void* devicePacked_ = nullptr;        // device memory only: the staging
  std::string error_;
  int errorClass_ = MPI_SUCCESS;
  bool beyondPacking_ = false;
};

// The `p` entries of an int array of a v-variant call, widened into `out`: MPI_SUCCESS, or the MPI
// error class of why not: MPI_ERR_COUNT for missing counts (`counts`) or a negative one,
// MPI_ERR_ARG for missing displacements, MPI_ERR_NO_MEM where this rank has no memory for them (a
// lack of resources, not an argument error: refuseServed).
template <typename T>
int widened(const int* v, int p, bool counts, std::vector<T>* out) {
  if (v == nullptr) return counts ? MPI_ERR_COUNT : MPI_ERR_ARG;
  try {
    out->resize(static_cast<size_t>(p));
  } catch (const std::bad_alloc&) {
    return MPI_ERR_NO_MEM;
  }
  for (int i = 0; i < p; ++i) {
    if (counts && v[i] < 0) return MPI_ERR_COUNT;
    (*out)[static_cast<size_t>(i)] = static_cast<T>(v[i]);
  }
  return MPI_SUCCESS;
}

// A served call whose unpacking failed after it: its error goes to the communicator's handler
// (failServed, src/mpi_face/face.h).
int failPacking(Call c, MPI_Comm comm, const PackedBlocks& blocks);
// Blocks this rank could not stage or pack before the call: it takes no part in it (refuseServed).
int refusePacking(Call c, MPI_Comm comm, const PackedBlocks& blocks);
// The first of `blocks` that failed (described or packed), or null.
const PackedBlocks* firstFailed(std::initializer_list<const PackedBlocks*> blocks);
// The first of `blocks` that lacks resources (PackedBlocks::lacksResources), or null.
const PackedBlocks* lackingResources(std::initializer_list<const PackedBlocks*> blocks);

}  // namespace strata::mpi_face
