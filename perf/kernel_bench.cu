// strata-kernel-bench: the reduce kernel's bandwidth against the same GPU's device-to-device
// cudaMemcpy, measured in the same run. Bytes moved: a copy of S bytes reads S and writes S; an
// n-input reduce of S bytes per input reads n*S and writes S. Medians of the timed iterations.
//
//   strata-kernel-bench [--bytes 256M] [--inputs 2,3,4,8] [--types float,bfloat16] [-n 20]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/common/datatype.h"
#include "kernels/cuda/cuda_kernels.h"
#include "perf/option_values.h"

namespace {

size_t parseBytes(const char* s) {
  size_t bytes = 0;
  if (!strata::perf::parseByteSize(s, &bytes)) {
    std::fprintf(stderr, "strata-kernel-bench: bad size '%s' (bytes, with an optional K, M or G)\n", s);
    std::exit(2);
  }
  return bytes;
}

#define CHECK(x)                                                                             \
  do {                                                                                       \
    cudaError_t rc_ = (x);                                                                   \
    if (rc_ != cudaSuccess) {                                                                \
      std::fprintf(stderr, "strata-kernel-bench: %s: %s\n", #x, cudaGetErrorString(rc_));    \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

template <typename F>
double medianSeconds(int iters, F&& f) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  f();  // warm-up
  std::vector<double> t;
  for (int i = 0; i < iters; ++i) {
    CHECK(cudaEventRecord(a));
    f();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms * 1e-3);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  size_t bytes = size_t{256} << 20;
  std::vector<int> inputs = {2, 3, 4, 8};
  std::vector<std::string> types = {"float", "bfloat16"};
  int iters = 20;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "strata-kernel-bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--bytes") bytes = parseBytes(value());
    else if (a == "--inputs") {
      inputs.clear();
      for (const std::string& s : strata::perf::splitList(value())) inputs.push_back(std::atoi(s.c_str()));
    } else if (a == "--types") types = strata::perf::splitList(value());
    else if (a == "-n") iters = std::atoi(value());
    else {
      std::fprintf(stderr, "usage: strata-kernel-bench [--bytes 256M] [--inputs 2,3,4,8] [--types float,bfloat16] [-n 20]\n");
      return 2;
    }
  }
  int device = 0;
  cudaDeviceProp prop{};
  CHECK(cudaGetDevice(&device));
  CHECK(cudaGetDeviceProperties(&prop, device));
  const int maxInputs = *std::max_element(inputs.begin(), inputs.end());
  std::vector<void*> bufs(static_cast<size_t>(maxInputs) + 1);
  for (void*& p : bufs) {
    CHECK(cudaMalloc(&p, bytes));
    CHECK(cudaMemset(p, 0, bytes));
  }
  const double copyT = medianSeconds(iters, [&] { CHECK(cudaMemcpyAsync(bufs[0], bufs[1], bytes, cudaMemcpyDeviceToDevice)); });
  const double copyBw = 2.0 * bytes / copyT / 1e9;
  std::printf("# %s, %zu MiB per input, medians of %d\n", prop.name, bytes >> 20, iters);
  std::printf("# cudaMemcpy device-to-device: %.3f ms, %.1f GB/s moved (read + write)\n", copyT * 1e3, copyBw);
  std::printf("#  %-9s %6s %10s %12s %9s\n", "type", "inputs", "time(ms)", "moved(GB/s)", "vs copy");
  const double copyKernelT = medianSeconds(iters, [&] {
    if (!strata::cuda::launchCopy(bufs[0], bufs[1], bytes, nullptr).ok()) std::exit(1);
  });
  std::printf("#  %-9s %6s %10.3f %12.1f %8.0f%%\n", "bytes", "copy", copyKernelT * 1e3, 2.0 * bytes / copyKernelT / 1e9,
              100.0 * (2.0 * bytes / copyKernelT / 1e9) / copyBw);
  for (const std::string& tn : types) {
    strata::DataType t{};
    if (!strata::parseDataType(tn.c_str(), &t)) {
      std::fprintf(stderr, "strata-kernel-bench: unknown type %s\n", tn.c_str());
      return 2;
    }
    const size_t count = bytes / strata::dataTypeSize(t);
    for (int n : inputs) {
      std::vector<const void*> srcs(bufs.begin() + 1, bufs.begin() + 1 + n);
      const double rt = medianSeconds(iters, [&] {
        if (!strata::cuda::launchReduce(bufs[0], nullptr, srcs.data(), n, count, t, strataSum, 0, nullptr).ok()) std::exit(1);
      });
      const double bw = (n + 1.0) * bytes / rt / 1e9;
      std::printf("#  %-9s %6d %10.3f %12.1f %8.0f%%\n", tn.c_str(), n, rt * 1e3, bw, 100.0 * bw / copyBw);
    }
  }
  for (void* p : bufs) cudaFree(p);
  return 0;
}
