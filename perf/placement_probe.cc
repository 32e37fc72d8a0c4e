// strata-placement-probe: how far apart two CPUs of this host are, as the round trip of one cache
// line between them, once or sampled over time.
//
// Under a hypervisor the guest's CPUs are threads of the host that the host may move: on the
// development VM (2 vCPUs, AMD EPYC of the Zen 5 family) the two ran in one of two placements that
// changed 38 times in 27 minutes, a line's round trip 65-156 ns in one and 314-567 ns in the other
// (most likely one core complex and its shared L3 against two), and with them every step between
// processes on different CPUs: a 2-rank 1 MiB full-lane allgather took 34.5 us on average in the
// near placement, 44.3 in the far one (perf/fidelity.sh records the placement beside its rounds).
//
// Two threads, pinned to the two CPUs, hand one cache line back and forth; a sample is the least
// mean round trip of `bursts` bursts of `trips` round trips each (the host's scheduling only ever
// adds time). A burst whose partner does not answer within a second (its CPU busy elsewhere) is
// left out; a sample without any burst is printed as -1. Between bursts both threads sleep, so
// the probe takes the CPUs only for its bursts (some 0.1-0.3% of the time at 500 ms intervals).
//
//   strata-placement-probe [--cpus A,B] [--watch SECONDS [--interval MS]] [--bursts N] [--trips N]
//     (default: the first two CPUs this process may run on; one sample; 20 bursts of 200 trips)
//   once: the round trip in ns; --watch: "UNIX-SECONDS NS" a line every interval (default 250 ms)
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "perf/option_values.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int cpuA = -1, cpuB = -1;
  double watchSeconds = 0, intervalMs = 250;
  // Short bursts, many: where the host's processes outnumber its CPUs the two threads run at once
  // only now and then (8 busy processes on the development VM's 2: the least of 3 bursts of 1000
  // trips read 1.7-12x the placement's round trip in 3 samples of 15, of 20 bursts of 200 in none).
  int bursts = 20, trips = 200;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "strata-placement-probe: %s\n"
               "usage: strata-placement-probe [--cpus A,B] [--watch SECONDS [--interval MS]] [--bursts N] "
               "[--trips N]\n",
               why);
  std::exit(2);
}

double number(int argc, char** argv, int* i, const char* name) {
  if (*i + 1 >= argc) usage((std::string(name) + " needs a value").c_str());
  double v = 0;
  if (!strata::perf::parseNonNegative(argv[++*i], &v) || !(v > 0)) {
    usage((std::string(name) + " needs a positive number").c_str());
  }
  return v;
}

// A count of at least 1 and at most a million (a burst's trips, the bursts of a sample).
int count(int argc, char** argv, int* i, const char* name) {
  const double v = number(argc, argv, i, name);
  if (v != static_cast<double>(static_cast<long>(v)) || v < 1 || v > 1e6) {
    usage((std::string(name) + " needs a whole number from 1 to 1000000").c_str());
  }
  return static_cast<int>(v);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--cpus") {
      if (i + 1 >= argc || std::sscanf(argv[++i], "%d,%d", &o.cpuA, &o.cpuB) != 2 || o.cpuA < 0 || o.cpuB < 0 ||
          o.cpuA == o.cpuB) {
        usage("--cpus needs two different CPU numbers, A,B");
      }
      if (o.cpuA >= CPU_SETSIZE || o.cpuB >= CPU_SETSIZE) {
        usage(("--cpus needs CPU numbers below " + std::to_string(CPU_SETSIZE)).c_str());
      }
    } else if (a == "--watch") {
      o.watchSeconds = number(argc, argv, &i, "--watch");
    } else if (a == "--interval") {
      o.intervalMs = number(argc, argv, &i, "--interval");
    } else if (a == "--bursts") {
      o.bursts = count(argc, argv, &i, "--bursts");
    } else if (a == "--trips") {
      o.trips = count(argc, argv, &i, "--trips");
    } else {
      usage(("unknown argument " + a).c_str());
    }
  }
  if (o.cpuA < 0) {  // the first two CPUs this process may run on
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) usage("cannot read this process's CPUs");
    for (int c = 0; c < CPU_SETSIZE && o.cpuB < 0; ++c) {
      if (!CPU_ISSET(c, &allowed)) continue;
      (o.cpuA < 0 ? o.cpuA : o.cpuB) = c;
    }
    if (o.cpuB < 0) usage("this process may run on one CPU only: nothing to measure between");
  }
  return o;
}

bool pin(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  return pthread_setaffinity_np(pthread_self(), sizeof s, &s) == 0;
}

// The line both threads write: its value counts the hand-overs of the current burst.
struct alignas(64) Line {
  std::atomic<long> value{0};
};

// Waits until `line` holds `want`, at most until `deadline`, and (with `current`) while `current`
// still holds `burst`; false when it stopped waiting for either.
bool awaitValue(const Line& line, long want, Clock::time_point deadline, const std::atomic<long>* current = nullptr,
                long burst = 0) {
  for (unsigned spins = 1;; ++spins) {
    if (line.value.load(std::memory_order_acquire) == want) return true;
    if ((spins & 1023) != 0) continue;
    if (Clock::now() > deadline) return false;
    if (current != nullptr && current->load(std::memory_order_acquire) != burst) return false;
  }
}

// The partner: answers every odd value with the next even one, burst after burst, until `stop`.
// Each burst starts from a value the main thread publishes in `start` (bursts numbered from 1);
// its first exchange wakes the partner and is not timed, its `trips` others are.
struct Partner {
  Line line;
  std::atomic<long> start{0};
  std::atomic<bool> stop{false};
  std::atomic<int> pinned{0};  // 1: on its CPU; -1: could not be put there
  int trips = 0;
  int exchanges() const { return trips + 1; }

  void run(int cpu) {
    pinned = pin(cpu) ? 1 : -1;
    if (pinned < 0) return;
    long seen = 0;
    while (!stop.load(std::memory_order_acquire)) {
      const long burst = start.load(std::memory_order_acquire);
      if (burst == seen) {
        // Blocked, not runnable, between bursts. A partner that yielded in a loop here kept its CPU
        // always busy: the kernel then moved the processes being watched off it, and 2 ranks on
        // the development VM's 2 CPUs shared one, each call waiting out the other's spin (a 64 B
        // allgather timed at 8 ms in calibration, a 1 MiB one at 0.6 ms, in each of fid51's 2-rank rounds).
        start.wait(seen, std::memory_order_acquire);
        continue;
      }
      seen = burst;
      const long base = burst * 2L * exchanges();
      const Clock::time_point deadline = Clock::now() + std::chrono::seconds(1);
      for (int k = 0; k < exchanges(); ++k) {
        if (!awaitValue(line, base + 2L * k + 1, deadline, &start, burst)) break;
        line.value.store(base + 2L * k + 2, std::memory_order_release);
      }
    }
  }
};

// One sample: the least mean round trip over the bursts, in ns; -1 when no burst completed.
double sample(Partner& partner, long* burst, int bursts) {
  double best = -1;
  for (int b = 0; b < bursts; ++b) {
    const long n = ++*burst;
    const long base = n * 2L * partner.exchanges();
    partner.line.value.store(base, std::memory_order_release);
    partner.start.store(n, std::memory_order_release);
    partner.start.notify_one();
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(1);
    Clock::time_point t0;
    bool complete = true;
    for (int k = 0; k < partner.exchanges() && complete; ++k) {
      partner.line.value.store(base + 2L * k + 1, std::memory_order_release);
      complete = awaitValue(partner.line, base + 2L * k + 2, deadline);
      if (k == 0) t0 = Clock::now();  // the partner is awake: the trips timed start here
    }
    const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / partner.trips;
    if (complete && (best < 0 || ns < best)) best = ns;
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (!pin(o.cpuA)) {
    std::fprintf(stderr, "strata-placement-probe: cannot run on CPU %d\n", o.cpuA);
    return 2;
  }
  Partner partner;
  partner.trips = o.trips;
  std::thread t([&] { partner.run(o.cpuB); });
  long burst = 0;
  int rc = 0;
  // The partner's pinning before the first burst (bounded: its thread may not get a CPU soon).
  for (int waited = 0; partner.pinned.load() == 0 && waited < 1000; ++waited) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (partner.pinned.load() != 1) {
    std::fprintf(stderr, "strata-placement-probe: %s CPU %d\n",
                 partner.pinned.load() < 0 ? "cannot run on" : "no thread started within a second on", o.cpuB);
    rc = 2;
  } else if (o.watchSeconds <= 0) {
    std::printf("%.0f\n", sample(partner, &burst, o.bursts));
  } else {
    auto span = [](double seconds) {
      return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    };
    const Clock::time_point end = Clock::now() + span(o.watchSeconds);
    for (Clock::time_point next = Clock::now(); next < end; next += span(o.intervalMs / 1e3)) {
      std::this_thread::sleep_until(next);
      const double ns = sample(partner, &burst, o.bursts);
      const double unix = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
      std::printf("%.3f %.0f\n", unix, ns);
      std::fflush(stdout);
    }
  }
  partner.stop = true;
  partner.start.store(-1, std::memory_order_release);  // wakes it: no burst is numbered -1
  partner.start.notify_one();
  t.join();
  return rc;
}
