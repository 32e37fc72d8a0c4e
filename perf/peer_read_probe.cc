// strata-peer-read-probe: what a process pays to write memory that a peer process has just read.
//
// Between two processes of one host the MPI library's shared-memory transport copies a large
// message once: the receiver reads the sender's buffer directly (Open MPI's vader with CMA). The
// lines it read stay in its core's cache, so the sender's next write to that buffer has to take
// each line back first. Collectives meet this call after call: a ring allreduce sends the blocks it
// reduced and writes them again in the next call, while a recursive-doubling allreduce sends only
// from the user's send buffer, which it never writes (that write falls to the application).
//
// Two ranks exchange SIZE bytes (send buffer A, receive buffer B), meet at a barrier, then each
// writes one byte per 64-byte line of A (the buffer the peer read) or of B (the buffer only it
// wrote); the write pass is timed. Prints the median of 50 passes per size and buffer, and the
// ratio. Run it under the transport's settings to compare (for Open MPI:
// `--mca btl_vader_single_copy_mechanism none` copies through a shared segment instead).
//
//   mpiexec -n 2 strata-peer-read-probe [SIZE ...]   (default 64K 256K 1M 4M)
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

size_t parseBytes(const char* s) {
  char* end = nullptr;
  double v = std::strtod(s, &end);
  if (end != nullptr && (*end == 'K' || *end == 'k')) v *= 1024;
  if (end != nullptr && (*end == 'M' || *end == 'm')) v *= 1024 * 1024;
  return v > 0 ? static_cast<size_t>(v) : 0;
}

// The median over `passes` of one write pass (a store per line) over `target` after an exchange.
double medianWritePass(char* sent, char* received, size_t bytes, bool writeSent, int peer, int passes) {
  std::vector<double> t;
  char* target = writeSent ? sent : received;
  for (int it = 0; it < passes + 5; ++it) {
    MPI_Request q[2];
    MPI_Irecv(received, static_cast<int>(bytes), MPI_BYTE, peer, 0, MPI_COMM_WORLD, &q[0]);
    MPI_Isend(sent, static_cast<int>(bytes), MPI_BYTE, peer, 0, MPI_COMM_WORLD, &q[1]);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (size_t i = 0; i < bytes; i += 64) target[i] = static_cast<char>(target[i] + 1);
    const double dt = MPI_Wtime() - t0;
    if (it >= 5) t.push_back(dt);  // the first passes fault the pages in
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) std::fprintf(stderr, "strata-peer-read-probe: run it on 2 ranks of one host (got %d)\n", size);
    MPI_Finalize();
    return 2;
  }
  std::vector<size_t> sizes;
  for (int i = 1; i < argc; ++i) {
    const size_t b = parseBytes(argv[i]);
    if (b == 0 || b > (size_t{1} << 30)) {
      if (rank == 0) std::fprintf(stderr, "strata-peer-read-probe: '%s' is not a size from 1 B to 1 GiB\n", argv[i]);
      MPI_Finalize();
      return 2;
    }
    sizes.push_back(b);
  }
  if (sizes.empty()) sizes = {64 << 10, 256 << 10, 1 << 20, 4 << 20};
  if (rank == 0) {
    std::printf("# a write pass (one store per 64-byte line) after a 2-rank exchange, median of 50\n");
    std::printf("# %10s %16s %16s %8s %14s\n", "bytes", "sent buf (us)", "recv buf (us)", "ratio", "extra ns/line");
  }
  for (size_t bytes : sizes) {
    std::vector<char> sent(bytes, 1), received(bytes, 1);
    const double s = medianWritePass(sent.data(), received.data(), bytes, true, 1 - rank, 50);
    const double r = medianWritePass(sent.data(), received.data(), bytes, false, 1 - rank, 50);
    if (rank == 0) {
      const double lines = static_cast<double>((bytes + 63) / 64);
      std::printf("  %10zu %16.2f %16.2f %8.2f %14.2f\n", bytes, s * 1e6, r * 1e6, s / std::max(r, 1e-9),
                  (s - r) / lines * 1e9);
    }
  }
  MPI_Finalize();
  return 0;
}
