// strata.hpp: C++ sugar over the C API: an owning communicator, typed spans, and exceptions that
// carry the result code and strataGetLastError's message. Every call forwards to the C function
// of the same name; nothing here is a second implementation. What the C API cannot see, the spans'
// lengths, is checked here first: a rank whose spans do not fit its call throws before it
// communicates (and its peers' call then waits for it until the communicator's bound, as for any
// argument only one rank gets wrong).
//
// The element type comes from the receive span; the send span is `Send<T>`, so an ordinary
// std::span<T> (or anything that converts to std::span<const T>) passes as it is.
#pragma once

#include <strata/strata.h>

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace strata {

class Error : public std::runtime_error {
 public:
  Error(strataResult_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  strataResult_t code() const noexcept { return code_; }

 private:
  strataResult_t code_;
};

template <typename T>
struct DataTypeOf;
template <> struct DataTypeOf<int8_t> { static constexpr strataDataType_t value = strataInt8; };
template <> struct DataTypeOf<uint8_t> { static constexpr strataDataType_t value = strataUint8; };
template <> struct DataTypeOf<int32_t> { static constexpr strataDataType_t value = strataInt32; };
template <> struct DataTypeOf<uint32_t> { static constexpr strataDataType_t value = strataUint32; };
template <> struct DataTypeOf<int64_t> { static constexpr strataDataType_t value = strataInt64; };
template <> struct DataTypeOf<uint64_t> { static constexpr strataDataType_t value = strataUint64; };
template <> struct DataTypeOf<float> { static constexpr strataDataType_t value = strataFloat32; };
template <> struct DataTypeOf<double> { static constexpr strataDataType_t value = strataFloat64; };
#if defined(__CUDA_FP16_TYPES_EXIST__)
template <> struct DataTypeOf<__half> { static constexpr strataDataType_t value = strataFloat16; };
#endif
#if defined(__CUDA_BF16_TYPES_EXIST__)
template <> struct DataTypeOf<__nv_bfloat16> { static constexpr strataDataType_t value = strataBfloat16; };
#endif
template <typename T>
inline constexpr strataDataType_t dataTypeOf = DataTypeOf<std::remove_cv_t<T>>::value;

template <typename T>
using Send = std::type_identity_t<std::span<const T>>;

// A communicator that destroys itself. Move-only.
class Comm {
 public:
  explicit Comm(MPI_Comm mpiComm, const strataConfig_t* config = nullptr) {
    check(strataCommInitMpi(&comm_, mpiComm, config), nullptr, "strataCommInitMpi");
  }
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  Comm(Comm&& other) noexcept : comm_(std::exchange(other.comm_, nullptr)) {}
  Comm& operator=(Comm&& other) noexcept {
    if (this != &other) {
      reset();
      comm_ = std::exchange(other.comm_, nullptr);
    }
    return *this;
  }
  ~Comm() { reset(); }

  strataComm_t get() const noexcept { return comm_; }
  int size() const {
    int n = 0;
    check(strataCommCount(comm_, &n), comm_, "strataCommCount");
    return n;
  }
  int rank() const {
    int r = 0;
    check(strataCommUserRank(comm_, &r), comm_, "strataCommUserRank");
    return r;
  }

  // strataCommGetAsyncError: strataSuccess, or the code of what failed outside a call (throws, as
  // every call does, once the communicator is gone).
  strataResult_t asyncError() const {
    strataResult_t e = strataSuccess;
    check(strataCommGetAsyncError(comm_, &e), comm_, "strataCommGetAsyncError");
    return e;
  }

  template <typename T>
  void allReduce(Send<T> send, std::span<T> recv, strataRedOp_t op, cudaStream_t stream = nullptr) const {
    requireSize(recv.size() == send.size(), "allReduce: recv.size() != send.size()");
    check(strataAllReduce(send.data(), recv.data(), send.size(), dataTypeOf<T>, op, comm_, stream), comm_, "strataAllReduce");
  }
  template <typename T>
  void allReduce(std::span<T> data, strataRedOp_t op, cudaStream_t stream = nullptr) const {
    check(strataAllReduce(data.data(), data.data(), data.size(), dataTypeOf<T>, op, comm_, stream), comm_, "strataAllReduce");
  }
  template <typename T>
  void broadcast(std::span<T> data, int root, cudaStream_t stream = nullptr) const {
    check(strataBroadcast(data.data(), data.data(), data.size(), dataTypeOf<T>, root, comm_, stream), comm_, "strataBroadcast");
  }
  template <typename T>
  void reduce(Send<T> send, std::span<T> recv, strataRedOp_t op, int root, cudaStream_t stream = nullptr) const {
    requireSize(rank() != root || recv.size() == send.size(), "reduce: recv.size() != send.size() at the root");
    check(strataReduce(send.data(), recv.data(), send.size(), dataTypeOf<T>, op, root, comm_, stream), comm_, "strataReduce");
  }
  template <typename T>
  void allGather(Send<T> send, std::span<T> recv, cudaStream_t stream = nullptr) const {
    requireSize(recv.size() == send.size() * static_cast<size_t>(size()), "allGather: recv.size() != send.size() * ranks");
    check(strataAllGather(send.data(), recv.data(), send.size(), dataTypeOf<T>, comm_, stream), comm_, "strataAllGather");
  }
  template <typename T>
  void reduceScatter(Send<T> send, std::span<T> recv, strataRedOp_t op, cudaStream_t stream = nullptr) const {
    requireSize(send.size() == recv.size() * static_cast<size_t>(size()), "reduceScatter: send.size() != recv.size() * ranks");
    check(strataReduceScatter(send.data(), recv.data(), recv.size(), dataTypeOf<T>, op, comm_, stream), comm_,
          "strataReduceScatter");
  }
  void barrier(cudaStream_t stream = nullptr) const { check(strataBarrier(comm_, stream), comm_, "strataBarrier"); }

 private:
  static void check(strataResult_t rc, strataComm_t comm, const char* call) {
    if (rc != strataSuccess) throw Error(rc, std::string(call) + ": " + strataGetLastError(comm));
  }
  static void requireSize(bool ok, const char* what) {
    if (!ok) throw Error(strataInvalidArgument, what);
  }
  void reset() noexcept {
    if (comm_ != nullptr) strataCommDestroy(comm_);
    comm_ = nullptr;
  }
  strataComm_t comm_ = nullptr;
};

}  // namespace strata
