#include "src/mpi_face/packed_blocks.h"

#include <algorithm>
#include <climits>

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

bool PackedBlocks::fail(std::string message) {
  error_ = std::move(message);
  return false;
}

bool PackedBlocks::describe(const void* base, size_t blocks, int64_t count, MPI_Datatype type) {
  const Layout l = layoutOf(type);
  if (!l.valid) return fail("invalid datatype");
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

bool PackedBlocks::describe(const void* base, std::vector<int64_t> counts, std::vector<int64_t> displs,
                            MPI_Datatype type) {
  const Layout l = layoutOf(type);
  if (!l.valid) return fail("invalid datatype");
  base_ = static_cast<char*>(const_cast<void*>(base));
  type_ = type;
  extent_ = l.extent;
  blocks_ = counts.size();
  uniform_ = false;
  counts_ = std::move(counts);
  displs_ = std::move(displs);
  offsets_.assign(blocks_, 0);
  bytes_.assign(blocks_, 0);
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
  if (l.extent <= 0) return fail("datatype with a non-positive extent");
  staged_ = true;
  size_t total = 0;
  for (size_t i = 0; i < blocks_; ++i) {
    if (bytes(i) > static_cast<size_t>(INT_MAX)) return fail("a block of a non-contiguous datatype over 2 GiB");
    total += bytes(i);
  }
  device_ = onDevice(base_);  // managed memory too: staged as Strata will read it, on the device
  hostPacked_.resize(std::max<size_t>(total, 1));
  if (!device_) {
    data_ = hostPacked_.data();
    return true;
  }
#ifdef STRATA_HAVE_CUDA
  // The span of the blocks in the user's buffer, for the host copy it is packed from and into.
  bool any = false;
  for (size_t i = 0; i < blocks_; ++i) {
    if (count(i) == 0) continue;
    const MPI_Aint begin = displ(i) * l.extent + l.trueLb;
    const MPI_Aint end = begin + (count(i) - 1) * l.extent + l.trueExtent;
    spanBegin_ = any ? std::min(spanBegin_, begin) : begin;
    spanEnd_ = any ? std::max(spanEnd_, end) : end;
    any = true;
  }
  if (cudaMalloc(&devicePacked_, std::max<size_t>(total, 1)) != cudaSuccess) {
    cudaGetLastError();
    return fail("cudaMalloc of the device staging for a non-contiguous datatype failed");
  }
  data_ = static_cast<char*>(devicePacked_);
  return true;
#else
  return fail("device memory in a build without CUDA");
#endif
}

bool PackedBlocks::stageSpan(bool fromDevice) {
#ifdef STRATA_HAVE_CUDA
  hostSpan_.resize(static_cast<size_t>(std::max<MPI_Aint>(spanEnd_ - spanBegin_, 1)));
  if (fromDevice && spanEnd_ > spanBegin_ &&
      cudaMemcpy(hostSpan_.data(), base_ + spanBegin_, static_cast<size_t>(spanEnd_ - spanBegin_),
                 cudaMemcpyDeviceToHost) != cudaSuccess) {
    return fail("cudaMemcpy of a non-contiguous datatype's span to the host failed");
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
    return fail("cudaMemcpy of a non-contiguous datatype's span to the device failed");
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
    int position = 0;
    if (PMPI_Pack(from + displ(i) * extent_, static_cast<int>(count(i)), type_, hostPacked_.data() + offset(i),
                  static_cast<int>(bytes(i)), &position, MPI_COMM_SELF) != MPI_SUCCESS ||
        static_cast<size_t>(position) != bytes(i)) {
      return fail("MPI_Pack of a non-contiguous datatype failed");
    }
  }
#ifdef STRATA_HAVE_CUDA
  if (device_ && last > first) {
    const size_t begin = offset(first), end = offset(last - 1) + bytes(last - 1);
    if (end > begin && cudaMemcpy(data_ + begin, hostPacked_.data() + begin, end - begin, cudaMemcpyHostToDevice) != cudaSuccess) {
      return fail("cudaMemcpy of packed data to the device failed");
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
      return fail("cudaMemcpy of the result to the host for unpacking failed");
    }
    if (!stageSpan(true)) return false;  // the bytes between the blocks stay as they are
  }
#endif
  char* to = device_ ? hostSpan_.data() - spanBegin_ : base_;
  for (size_t i = 0; i < blocks_; ++i) {
    int position = 0;
    if (PMPI_Unpack(hostPacked_.data() + offset(i), static_cast<int>(bytes(i)), &position, to + displ(i) * extent_,
                    static_cast<int>(count(i)), type_, MPI_COMM_SELF) != MPI_SUCCESS) {
      return fail("MPI_Unpack of a non-contiguous datatype failed");
    }
  }
  return !device_ || flushSpan();
}

}  // namespace strata::mpi_face
