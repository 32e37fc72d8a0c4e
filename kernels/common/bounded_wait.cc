#include "kernels/common/bounded_wait.h"

#include <sched.h>
#include <unistd.h>

namespace strata {

double WaitPolicy::defaultSpinSeconds(int processesOnHost) {
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const bool oversubscribed = cores > 0 && processesOnHost > cores;
  // Oversubscribed: a few polls' worth before yielding (yielding from the first idle poll made 8
  // ranks on 2 cores 2x slower: Open MPI's shared-memory transport progresses only while polled).
  return oversubscribed ? 20e-6 : 5e-3;
}

void Waiter::yieldCore() { sched_yield(); }

}  // namespace strata
