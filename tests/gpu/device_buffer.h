// DeviceBytes: a cudaMalloc'd buffer for tests, filled from and read back into host vectors.
// Every fill waits for the device afterwards: cudaMemcpy from pageable host memory may return
// before the device memory is written, and the tests' kernels run on streams that cudaMemcpy's
// legacy default stream does not order.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace strata::test {

class DeviceBytes {
 public:
  explicit DeviceBytes(size_t bytes, uint8_t fill = 0xAB) : bytes_(bytes) {
    EXPECT_EQ(cudaMalloc(&ptr_, bytes_ == 0 ? 1 : bytes_), cudaSuccess);
    EXPECT_EQ(cudaMemset(ptr_, fill, bytes_), cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  explicit DeviceBytes(const std::vector<uint8_t>& host) : DeviceBytes(host.size()) { write(host); }
  template <typename T>
  explicit DeviceBytes(const std::vector<T>& host) : DeviceBytes(host.size() * sizeof(T)) {
    EXPECT_EQ(cudaMemcpy(ptr_, host.data(), bytes_, cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  ~DeviceBytes() { cudaFree(ptr_); }
  DeviceBytes(DeviceBytes&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr; }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;

  uint8_t* ptr(size_t offset = 0) const { return static_cast<uint8_t*>(ptr_) + offset; }
  template <typename T>
  T* as() const { return static_cast<T*>(ptr_); }
  size_t size() const { return bytes_; }

  void write(const std::vector<uint8_t>& host) {
    EXPECT_EQ(cudaMemcpy(ptr_, host.data(), host.size(), cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  std::vector<uint8_t> host() const {
    std::vector<uint8_t> h(bytes_);
    EXPECT_EQ(cudaMemcpy(h.data(), ptr_, bytes_, cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
  }
  template <typename T>
  std::vector<T> hostAs() const {
    std::vector<T> h(bytes_ / sizeof(T));
    EXPECT_EQ(cudaMemcpy(h.data(), ptr_, h.size() * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
  }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace strata::test
