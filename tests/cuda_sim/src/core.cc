// Options, errors, devices and counters: the simulator's small shared pieces.
#include <sys/prctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "sim.h"

namespace cuda_sim {
namespace {

std::string vformat(const char* fmt, va_list args) {
  char buf[1024];
  std::vsnprintf(buf, sizeof buf, fmt, args);
  return buf;
}

double envNumber(const char* name, double fallback) {
  const char* e = std::getenv(name);
  if (e == nullptr || *e == '\0') return fallback;
  char* end = nullptr;
  const double v = std::strtod(e, &end);
  if (end == e || *end != '\0' || v < 0) {
    std::fprintf(stderr, "[cuda_sim] %s=%s is not a non-negative number; using %g\n", name, e, fallback);
    return fallback;
  }
  return v;
}

thread_local cudaError_t tLastError = cudaSuccess;
std::atomic<int> gSticky{cudaSuccess};
std::mutex gDiagnosisMutex;
std::string gDiagnosis;
thread_local int tDevice = 0;
const auto gStart = std::chrono::steady_clock::now();

}  // namespace

void preciseSleep(unsigned us) {
  prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
  std::this_thread::sleep_for(std::chrono::microseconds(us));
  prctl(PR_SET_TIMERSLACK, 0UL, 0, 0, 0);  // 0: the thread's default slack
}

const Options& options() {
  static const Options o = [] {
    Options r;
    r.devices = static_cast<int>(envNumber("CUDA_SIM_DEVICES", 1));
    if (r.devices < 1) r.devices = 1;
    r.jitterMicros = static_cast<unsigned>(envNumber("CUDA_SIM_JITTER_US", 20));
    r.launchBlocking = envNumber("CUDA_LAUNCH_BLOCKING", 0) > 0;
    r.hostAccess = envNumber("CUDA_SIM_HOST_ACCESS", 0) > 0;
    r.streamMemOps = envNumber("CUDA_SIM_STREAM_MEM_OPS", 1) > 0;
    r.blockThreads = static_cast<int>(envNumber("CUDA_SIM_BLOCK_THREADS", 2));
    if (r.blockThreads < 1) r.blockThreads = 1;
    r.syncTimeout = envNumber("CUDA_SIM_SYNC_TIMEOUT", 300);
    r.hostCopyGBps = envNumber("CUDA_SIM_HOST_COPY_GBPS", 0);
    r.deviceMemory = static_cast<size_t>(envNumber("CUDA_SIM_DEVICE_MEMORY", static_cast<double>(r.deviceMemory)));
    const char* loading = std::getenv("CUDA_MODULE_LOADING");
    r.lazyLoading = loading == nullptr || std::strcmp(loading, "EAGER") != 0;
    const double connections = envNumber("CUDA_DEVICE_MAX_CONNECTIONS", 0);
    r.connections = connections < 1 ? 0 : connections > 32 ? 32 : static_cast<int>(connections);
    const char* v = std::getenv("CUDA_SIM_VIOLATIONS");
    r.warnOnViolation = v != nullptr && std::strcmp(v, "warn") == 0;
    return r;
  }();
  return o;
}

void diagnose(const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(gDiagnosisMutex);
    gDiagnosis = message;
  }
  std::fprintf(stderr, "[cuda_sim %d] %s\n", static_cast<int>(getpid()), message.c_str());
}

cudaError_t fail(cudaError_t code, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  const std::string m = vformat(fmt, args);
  va_end(args);
  {
    std::lock_guard<std::mutex> lock(gDiagnosisMutex);
    gDiagnosis = m;
  }
  if (std::getenv("CUDA_SIM_VERBOSE") != nullptr) std::fprintf(stderr, "[cuda_sim %d] %s\n", static_cast<int>(getpid()), m.c_str());
  tLastError = code;
  return code;
}

void setSticky(cudaError_t code, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  const std::string m = vformat(fmt, args);
  va_end(args);
  int expected = cudaSuccess;
  if (gSticky.compare_exchange_strong(expected, code)) {
    diagnose(std::string(cudaGetErrorName(code)) + " (sticky: every later call fails): " + m);
  }
}

cudaError_t sticky() { return static_cast<cudaError_t>(gSticky.load(std::memory_order_relaxed)); }

void violation(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  const std::string m = vformat(fmt, args);
  va_end(args);
  diagnose("CUDA rule broken: " + m);
  if (!options().warnOnViolation) {
    std::fprintf(stderr, "[cuda_sim] aborting (CUDA_SIM_VIOLATIONS=warn reports and goes on)\n");
    std::abort();
  }
}

cudaError_t lastErrorPeek() {
  const cudaError_t s = sticky();
  return s != cudaSuccess ? s : tLastError;
}

cudaError_t lastErrorTake() {
  const cudaError_t s = sticky();
  if (s != cudaSuccess) return s;
  const cudaError_t e = tLastError;
  tLastError = cudaSuccess;
  return e;
}

int currentDevice() { return tDevice; }
void setCurrentDevice(int device) { tDevice = device; }

double secondsSinceStart() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - gStart).count();
}

namespace {
using CounterField = std::atomic<unsigned long long> Counters::*;
constexpr CounterField kCounterFields[] = {
    &Counters::launches,       &Counters::kernelRead,        &Counters::kernelWritten,  &Counters::copies,
    &Counters::h2d,            &Counters::d2h,               &Counters::d2d,            &Counters::h2h,
    &Counters::kernelPeerRead, &Counters::kernelPeerWritten, &Counters::kernelHostRead, &Counters::kernelHostWritten,
    &Counters::p2p};
}  // namespace

void Counters::add(const Counters& o) {
  for (CounterField f : kCounterFields) this->*f += (o.*f).load();
}

void Counters::reset() {
  for (CounterField f : kCounterFields) (this->*f).store(0);
}

void Counters::to(cudaSimCounters* out) const {
  out->kernelLaunches = launches.load();
  out->kernelBytesRead = kernelRead.load();
  out->kernelBytesWritten = kernelWritten.load();
  out->copies = copies.load();
  out->bytesHostToDevice = h2d.load();
  out->bytesDeviceToHost = d2h.load();
  out->bytesDeviceToDevice = d2d.load();
  out->bytesHostToHost = h2h.load();
  out->kernelBytesReadPeer = kernelPeerRead.load();
  out->kernelBytesWrittenPeer = kernelPeerWritten.load();
  out->kernelBytesReadHost = kernelHostRead.load();
  out->kernelBytesWrittenHost = kernelHostWritten.load();
  out->bytesPeerToPeer = p2p.load();
}

Counters& processCounters() {
  static Counters* c = new Counters;  // never destroyed: workers may still count at exit
  return *c;
}

}  // namespace cuda_sim

extern "C" {

__attribute__((visibility("default"))) int cudaSimIsSimulator(void) { return 1; }

__attribute__((visibility("default"))) const char* cudaSimLastDiagnosis(void) {
  static thread_local std::string copy;
  std::lock_guard<std::mutex> lock(cuda_sim::gDiagnosisMutex);
  copy = cuda_sim::gDiagnosis;
  return copy.c_str();
}

__attribute__((visibility("default"))) cudaError_t cudaSimGetProcessCounters(cudaSimCounters* out) {
  if (out == nullptr) return cudaErrorInvalidValue;
  cuda_sim::processCounters().to(out);
  return cudaSuccess;
}

__attribute__((visibility("default"))) cudaError_t cudaSimGetStreamCounters(cudaStream_t stream, cudaSimCounters* out) {
  if (out == nullptr) return cudaErrorInvalidValue;
  CUstream_st* s = cuda_sim::resolveStream(stream);
  if (s == nullptr) return cudaErrorInvalidResourceHandle;
  s->counters.to(out);
  return cudaSuccess;
}

}  // extern "C"
