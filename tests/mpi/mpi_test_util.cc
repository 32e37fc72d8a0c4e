#include "tests/mpi/mpi_test_util.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>

#ifdef STRATA_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace strata::test {

int worldRank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int worldSize() {
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

namespace {
std::map<std::string, strataComm_t>& comms() {
  static std::map<std::string, strataComm_t> m;
  return m;
}
}  // namespace

strataComm_t commFor(const std::string& shape, const std::string& algorithm) {
  const std::string key = shape + "|" + algorithm;
  auto it = comms().find(key);
  if (it != comms().end()) return it->second;
  // The node shape goes through the environment: it accepts lists ("3,5") the config field does not.
  setenv("STRATA_RANKS_PER_NODE", shape.c_str(), 1);
  strataConfig_t config = STRATA_CONFIG_INITIALIZER;
  config.algorithm = algorithm.empty() ? nullptr : algorithm.c_str();
  config.timeoutSeconds = 120;
  strataComm_t comm = nullptr;
  const strataResult_t rc = strataCommInitMpi(&comm, MPI_COMM_WORLD, &config);
  unsetenv("STRATA_RANKS_PER_NODE");
  if (rc != strataSuccess) {
    ADD_FAILURE() << "strataCommInitMpi(shape " << shape << ", algorithm " << algorithm
                  << ") failed: " << strataGetLastError(nullptr);
    return nullptr;
  }
  comms()[key] = comm;
  return comm;
}

void releaseComms() {
  for (auto& [key, comm] : comms()) strataCommDestroy(comm);
  comms().clear();
}

std::vector<std::string> shapesFor(int p) {
  std::vector<std::string> s = {"0"};
  if (p > 1) s.push_back("1");
  if (p >= 4 && p % 2 == 0) s.push_back(std::to_string(p / 2));
  if (p == 8) {
    s.push_back("2");
    s.push_back("3,5");
  }
  if (p == 5) s.push_back("3");
  return s;
}

bool allRanksOk(bool localOk) {
  int ok = localOk ? 1 : 0, all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

bool testOnDevice() {
  static const bool on = [] {
    const char* e = std::getenv("STRATA_TEST_DEVICE");
    if (e == nullptr || std::atoi(e) <= 0) return false;
#ifdef STRATA_HAVE_CUDA
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
      cudaGetLastError();
      return false;
    }
    cudaSetDevice(worldRank() % n);  // several ranks share a GPU on a one-GPU machine
    return true;
#else
    return false;
#endif
  }();
  return on;
}

bool deviceModeUsable() {
  const char* e = std::getenv("STRATA_TEST_DEVICE");
  if (e == nullptr || std::atoi(e) <= 0) return true;  // host mode: always usable
  const bool all = allRanksOk(testOnDevice());
  if (!all && worldRank() == 0) std::printf("STRATA_TEST_DEVICE=1 but a rank has no CUDA device: skipping\n");
  return all;
}

void* Translate::operator()(const void* host) const {
  if (host == nullptr) return nullptr;
  const auto* h = static_cast<const unsigned char*>(host);
  for (const auto& [buf, dev] : mirrors) {
    if (h >= buf->whole() && h <= buf->whole() + buf->wholeBytes()) return static_cast<unsigned char*>(dev) + (h - buf->whole());
  }
  return const_cast<void*>(host);
}

strataResult_t onDevice(std::initializer_list<GuardedBuffer*> buffers,
                        const std::function<strataResult_t(const Translate&, cudaStream_t)>& call) {
  Translate t;
  if (!testOnDevice()) return call(t, nullptr);
#ifdef STRATA_HAVE_CUDA
  static cudaStream_t stream = [] {
    cudaStream_t s = nullptr;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    return s;
  }();
  for (GuardedBuffer* b : buffers) {
    void* d = nullptr;
    if (cudaMalloc(&d, b->wholeBytes()) != cudaSuccess) return strataUnhandledCudaError;
    // On the call's stream: a cudaMemcpy from pageable memory may return before the device is
    // written, and the legacy stream it runs on does not order the non-blocking `stream`.
    if (cudaMemcpyAsync(d, b->whole(), b->wholeBytes(), cudaMemcpyHostToDevice, stream) != cudaSuccess) {
      return strataUnhandledCudaError;
    }
    t.mirrors.push_back({b, d});
  }
  const strataResult_t rc = call(t, stream);
  const bool synced = cudaStreamSynchronize(stream) == cudaSuccess;
  bool copied = true;
  for (auto& [b, d] : t.mirrors) {
    copied &= cudaMemcpy(b->whole(), d, b->wholeBytes(), cudaMemcpyDeviceToHost) == cudaSuccess;
    cudaFree(d);
  }
  return rc != strataSuccess ? rc : synced && copied ? strataSuccess : strataUnhandledCudaError;
#else
  return call(t, nullptr);
#endif
}

}  // namespace strata::test
