#include "src/mpi_face/packed_blocks.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <new>

#include "src/mpi_face/face.h"
#include "src/mpi_face/mpi_types.h"

#ifdef STRATA_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace strata::mpi_face {

PackedBlocks::~PackedBlocks() {
#ifdef STRATA_HAVE_CUDA
  if (devicePacked_ != nullptr) cudaFree(devicePacked_);
#endif
}

bool PackedBlocks::fail(int errorClass, std::string message) {
  errorClass_ = errorClass;
  error_ = std::move(message);
  return false;
}

int failPacking(Call c, MPI_Comm comm, const PackedBlocks& blocks) {
  return failServed(c, comm, blocks.errorClass(), blocks.error());
}

int refusePacking(Call c, MPI_Comm comm, const PackedBlocks& blocks) {
  return refuseServed(c, comm, blocks.errorClass(), blocks.error());
}

const PackedBlocks* firstFailed(std::initializer_list<const PackedBlocks*> blocks) {
  for (const PackedBlocks* b : blocks) {
    if (b->errorClass() != MPI_SUCCESS) return b;
  }
  return nullptr;
}

const PackedBlocks* lackingResources(std::initializer_list<const PackedBlocks*> blocks) {
  for (const PackedBlocks* b : blocks) {
    if (b->lacksResources()) return b;
  }
  return nullptr;
}

bool PackedBlocks::describe(const void* base, size_t blocks, int64_t count, MPI_Datatype type) {
  const Layout l = layoutOf(type);
  if (!l.valid) return fail(MPI_ERR_TYPE, "invalid datatype");
  base_ = static_cast<char*>(const_cast<void*>(base));
  type_ = type;
  extent_ = l.extent;
  blocks_ = blocks;
  uniform_ = true;
  uniformCount_ = count;
  uniformBytes_ = static_cast<size_t>(count) * l.size;
  if (l.contiguous) {
    data_ = base_;
    uniformStride_ = static_cast<size_t>(count * static_cast<int64_t>(l.extent));
    return true;
  }
  uniformStride_ = uniformBytes_;
  return stage(l);
}

bool PackedBlocks::describe(const void* base, const int* counts, const int* displs, int blocks, MPI_Datatype type) {
  const Layout l = layoutOf(type);
  if (!l.valid) return fail(MPI_ERR_TYPE, "invalid datatype");
  base_ = static_cast<char*>(const_cast<void*>(base));
  type_ = type;
  extent_ = l.extent;
  blocks_ = static_cast<size_t>(blocks);
  uniform_ = false;
  if (const int why = widened(counts, blocks, true, &counts_); why != MPI_SUCCESS) {
    return fail(why, why == MPI_ERR_NO_MEM ? "no host memory for the blocks' counts" : "counts missing or negative");
  }
  if (const int why = widened(displs, blocks, false, &displs_); why != MPI_SUCCESS) {
    return fail(why, why == MPI_ERR_NO_MEM ? "no host memory for the blocks' displacements" : "displacements missing");
  }
  try {
    offsets_.assign(blocks_, 0);
    bytes_.assign(blocks_, 0);
  } catch (const std::bad_alloc&) {
    return fail(MPI_ERR_NO_MEM, "no host memory for the blocks' offsets");
  }
  // MPI reads no displacement of an empty block, and programs leave them unset: each takes the
  // first non-empty block's, so none moves the rebased buffer's start or length.
  const auto nonEmpty = std::find_if(counts_.begin(), counts_.end(), [](int64_t c) { return c != 0; });
  const int64_t anyDispl = nonEmpty == counts_.end() ? 0 : displs_[static_cast<size_t>(nonEmpty - counts_.begin())];
  for (size_t i = 0; i < blocks_; ++i) {
    if (counts_[i] == 0) displs_[i] = anyDispl;
  }
  for (size_t i = 0; i < blocks_; ++i) bytes_[i] = static_cast<size_t>(counts_[i]) * l.size;
  if (l.contiguous) {
    // The user's memory: displacements relative to the lowest one (MPI allows negative ones).
    int64_t lowest = 0;
    for (size_t i = 0; i < blocks_; ++i) lowest = i == 0 ? displs_[i] : std::min(lowest, displs_[i]);
    data_ = base_ + lowest * static_cast<int64_t>(l.extent);
    for (size_t i = 0; i < blocks_; ++i) {
      offsets_[i] = static_cast<size_t>((displs_[i] - lowest) * static_cast<int64_t>(l.extent));
    }
    return true;
  }
  size_t total = 0;
  for (size_t i = 0; i < blocks_; ++i) {
    offsets_[i] = total;
    total += bytes_[i];
  }
  return stage(l);
}

bool PackedBlocks::stage(const Layout& l) {
  // MPI_Pack counts in int: a block goes in pieces of at most INT_MAX bytes, whole elements each
  // (movePieces); only an element itself over 2 GiB cannot, which no rank of a call can know of
  // another's datatype, so that rank passes the call to MPI (serve.h, unservable: where every rank
  // has such an element, MPI serves the call).
  if (l.size > static_cast<size_t>(INT_MAX)) {
    beyondPacking_ = true;
    return fail(MPI_ERR_TYPE, "an element of a non-contiguous datatype over 2 GiB, which the face cannot pack");
  }
  elementBytes_ = l.size;
  staged_ = true;
  size_t total = 0;
  for (size_t i = 0; i < blocks_; ++i) {
    // Blocks whose bytes add up past what a size_t holds describe memory no process has.
    if (bytes(i) > SIZE_MAX - total) return fail(MPI_ERR_COUNT, "the blocks' bytes add up past 2^64");
    total += bytes(i);
  }
  device_ = onDevice(base_);  // managed memory too: staged as Strata will read it, on the device
  try {
    hostPacked_.resize(std::max<size_t>(total, 1));
  } catch (const std::bad_alloc&) {
    return fail(MPI_ERR_NO_MEM, "no host memory for the staging of a non-contiguous datatype");
  }
  if (!device_) {
    data_ = hostPacked_.data();
    return true;
  }
#ifdef STRATA_HAVE_CUDA
  // The span of the blocks in the user's buffer, for the host copy it is packed from and into:
  // a block's first and last elements bound it, in either order (an extent may be zero or negative).
  bool any = false;
  for (size_t i = 0; i < blocks_; ++i) {
    if (count(i) == 0) continue;
    const MPI_Aint first = displ(i) * l.extent, last = first + (count(i) - 1) * l.extent;
    const MPI_Aint begin = std::min(first, last) + l.trueLb;
    const MPI_Aint end = std::max(first, last) + l.trueLb + l.trueExtent;
    spanBegin_ = any ? std::min(spanBegin_, begin) : begin;
    spanEnd_ = any ? std::max(spanEnd_, end) : end;
    any = true;
  }
  if (cudaMalloc(&devicePacked_, std::max<size_t>(total, 1)) != cudaSuccess) {
    cudaGetLastError();
    return fail(MPI_ERR_NO_MEM, "cudaMalloc of the device staging for a non-contiguous datatype failed");
  }
  data_ = static_cast<char*>(devicePacked_);
  return true;
#else
  return fail(MPI_ERR_BUFFER, "device memory in a build without CUDA");
#endif
}

bool PackedBlocks::stageSpan(bool fromDevice) {
#ifdef STRATA_HAVE_CUDA
  try {
    hostSpan_.resize(static_cast<size_t>(std::max<MPI_Aint>(spanEnd_ - spanBegin_, 1)));
  } catch (const std::bad_alloc&) {
    return fail(MPI_ERR_NO_MEM, "no host memory for a non-contiguous datatype's span");
  }
  if (fromDevice && spanEnd_ > spanBegin_ &&
      cudaMemcpy(hostSpan_.data(), base_ + spanBegin_, static_cast<size_t>(spanEnd_ - spanBegin_),
                 cudaMemcpyDeviceToHost) != cudaSuccess) {
    return fail(MPI_ERR_OTHER, "cudaMemcpy of a non-contiguous datatype's span to the host failed");
  }
  return true;
#else
  (void)fromDevice;
  return false;
#endif
}

bool PackedBlocks::flushSpan() {
#ifdef STRATA_HAVE_CUDA
  if (spanEnd_ > spanBegin_ && cudaMemcpy(base_ + spanBegin_, hostSpan_.data(), static_cast<size_t>(spanEnd_ - spanBegin_),
                                          cudaMemcpyHostToDevice) != cudaSuccess) {
    return fail(MPI_ERR_OTHER, "cudaMemcpy of a non-contiguous datatype's span to the device failed");
  }
  return true;
#else
  return false;
#endif
}

bool PackedBlocks::packIn(size_t first, size_t last) {
  if (!staged_) return true;
  // Host copy of the device span: the datatype's displacements address it like the user's buffer.
  if (device_ && !stageSpan(true)) return false;
  char* from = device_ ? hostSpan_.data() - spanBegin_ : base_;
  for (size_t i = first; i < last; ++i) {
    if (!movePieces(i, from, true)) return fail(MPI_ERR_INTERN, "MPI_Pack of a non-contiguous datatype failed");
  }
#ifdef STRATA_HAVE_CUDA
  if (device_ && last > first) {
    const size_t begin = offset(first), end = offset(last - 1) + bytes(last - 1);
    if (end > begin && cudaMemcpy(data_ + begin, hostPacked_.data() + begin, end - begin, cudaMemcpyHostToDevice) != cudaSuccess) {
      return fail(MPI_ERR_OTHER, "cudaMemcpy of packed data to the device failed");
    }
  }
#endif
  return true;
}

bool PackedBlocks::unpackOut() {
  if (!staged_) return true;
#ifdef STRATA_HAVE_CUDA
  if (device_) {
    const size_t total = blocks_ == 0 ? 0 : offset(blocks_ - 1) + bytes(blocks_ - 1);
    if (total != 0 && cudaMemcpy(hostPacked_.data(), data_, total, cudaMemcpyDeviceToHost) != cudaSuccess) {
      return fail(MPI_ERR_OTHER, "cudaMemcpy of the result to the host for unpacking failed");
    }
    if (!stageSpan(true)) return false;  // the bytes between the blocks stay as they are
  }
#endif
  char* to = device_ ? hostSpan_.data() - spanBegin_ : base_;
  for (size_t i = 0; i < blocks_; ++i) {
    if (!movePieces(i, to, false)) return fail(MPI_ERR_INTERN, "MPI_Unpack of a non-contiguous datatype failed");
  }
  return !device_ || flushSpan();
}

bool PackedBlocks::movePieces(size_t i, char* user, bool pack) {
  const int64_t perPiece = elementBytes_ == 0 ? count(i) : static_cast<int64_t>(INT_MAX / elementBytes_);
  char* packed = hostPacked_.data() + offset(i);
  for (int64_t done = 0; done < count(i);) {
    const int64_t n = std::min(perPiece, count(i) - done);
    const int pieceBytes = static_cast<int>(static_cast<size_t>(n) * elementBytes_);
    char* at = user + (displ(i) + done) * extent_;
    int position = 0;
    const int rc = pack ? PMPI_Pack(at, static_cast<int>(n), type_, packed, pieceBytes, &position, MPI_COMM_SELF)
                        : PMPI_Unpack(packed, pieceBytes, &position, at, static_cast<int>(n), type_, MPI_COMM_SELF);
    if (rc != MPI_SUCCESS || position != pieceBytes) return false;
    packed += pieceBytes;
    done += n;
  }
  return true;
}

}  // namespace strata::mpi_face
