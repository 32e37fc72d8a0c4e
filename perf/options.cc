#include "perf/options.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kernels/common/datatype.h"
#include "perf/collective_descriptors.h"
#include "perf/option_values.h"

namespace strata::perf {

int gRank = 0, gSize = 1;

bool isMpiImpl(const std::string& impl) { return impl == "mpi" || impl == "pmpi"; }

namespace {

[[noreturn]] void usageAndExit(int code) {
  if (gRank == 0) {
    std::printf(
        "usage: strata-perf [options]\n"
        "  -b, --minbytes N     smallest size (default 8; K, M, G suffixes)\n"
        "  -e, --maxbytes N     largest size (default 64M)\n"
        "  -i, --stepbytes N    add N between sizes (default: multiply by -f)\n"
        "  -f, --stepfactor F   multiply the size by F between sizes (default 2)\n"
        "  -n, --iters N        timed iterations per size (default 20)\n"
        "  -w, --warmup_iters N untimed iterations first (default 5)\n"
        "  --sequential         time the variants one after another, each after its own warm-up (default:\n"
        "                       interleaved iteration by iteration, where each call runs in what the\n"
        "                       previous variant left behind)\n"
        "  --passes K           run the whole sweep K times one after another (default 1); each row is\n"
        "                       the median of its K passes' medians, so a machine whose speed drifts over\n"
        "                       seconds is sampled at K times (each pass's tables are printed as it runs)\n"
        "  -c, --check 0|1      check every size against the reference (default 1)\n"
        "  -d, --datatype T     int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 (default float)\n"
        "  -o, --op OP          sum prod max min avg (default sum)\n"
        "  -r, --root R         root of rooted collectives (default 0)\n"
        "  -z, --blocking 0|1   accepted for nccl-tests' command lines: every call is timed to its completion\n"
        "  --op NAME[,NAME]     allreduce broadcast reduce allgather reducescatter gather scatter alltoall\n"
        "                       scan exscan shift barrier, or all\n"
        "  --impl I[,I]         strata, mpi (MPI_Allreduce etc.: the MPI library's own collective, or the\n"
        "                       MPI face's under LD_PRELOAD=libstrata_mpi.so), pmpi (PMPI_Allreduce etc.:\n"
        "                       always the MPI library's), nccl (--mem device); the first is the subject\n"
        "  --algo A[,A]         algorithm(s) of strata's collective (auto: the tuner's choice; all: every\n"
        "                       one, so auto,all times the choice beside every algorithm)\n"
        "  --mem host|device    memory space of the buffers (device: calls ordered on a CUDA stream,\n"
        "                       timed to the stream's completion; mpi then stages whole buffers\n"
        "                       through the host unless MPI is CUDA-aware)\n"
        "  --csv FILE           also write every row as CSV\n"
        "  --plot FILE.png      time against size, one line per implementation and algorithm\n"
        "  --shift S            strataShift's shift (default 1)\n"
        "  --phases             per-phase medians of strata's plans (node steps, lane steps, ...)\n"
        "  --algorithms         list every algorithm (flat and hierarchical) with its cost formula\n"
        "  --calibrate FILE     measure alpha/beta/gamma of the node, the lanes and the flat level, write\n"
        "                       FILE (read by the library through STRATA_TOPO_FILE), then run the\n"
        "                       benchmark with it; -b/-e of 0 0 skip the benchmark\n"
        "Environment: STRATA_RANKS_PER_NODE (virtual nodes), STRATA_DEBUG, STRATA_TOPO_FILE.\n");
  }
  MPI_Finalize();
  std::exit(code);
}

size_t parseBytes(const char* text) {
  size_t bytes = 0;
  if (!parseByteSize(text, &bytes)) {
    if (gRank == 0) std::fprintf(stderr, "strata-perf: bad size '%s' (bytes, with an optional K, M or G)\n", text);
    usageAndExit(2);
  }
  return bytes;
}

}  // namespace

Options parseOptions(int argc, char** argv) {
  Options o;
  bool opIsCollective = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        if (gRank == 0) std::fprintf(stderr, "strata-perf: %s needs a value\n", a.c_str());
        usageAndExit(2);
      }
      return argv[++i];
    };
    if (a == "-h" || a == "--help") usageAndExit(0);
    else if (a == "-b" || a == "--minbytes") o.minBytes = parseBytes(value());
    else if (a == "-e" || a == "--maxbytes") o.maxBytes = parseBytes(value());
    else if (a == "-i" || a == "--stepbytes") o.stepBytes = parseBytes(value());
    else if (a == "-f" || a == "--stepfactor") o.stepFactor = std::atof(value());
    else if (a == "-n" || a == "--iters") o.iters = std::atoi(value());
    else if (a == "-w" || a == "--warmup_iters") o.warmup = std::atoi(value());
    else if (a == "--sequential") o.sequential = true;
    else if (a == "--passes") o.passes = std::atoi(value());
    else if (a == "-c" || a == "--check") o.check = std::atoi(value());
    else if (a == "-r" || a == "--root") o.root = std::atoi(value());
    else if (a == "-z" || a == "--blocking") (void)value();  // every call is timed to completion anyway
    else if (a == "-d" || a == "--datatype") {
      if (!parseDataType(value(), &o.type)) usageAndExit(2);
    } else if (a == "-o" || a == "--op") {
      // nccl-tests' -o is the reduction op; --op names the collective(s) when given a collective name.
      const char* v = value();
      RedOp r;
      if (a == "-o" || (parseRedOp(v, &r) && !findDescriptor(v))) {
        if (!parseRedOp(v, &o.op)) usageAndExit(2);
      } else {
        opIsCollective = true;
        o.ops.clear();
        for (const std::string& name : splitList(v)) {
          if (name == "all") {
            for (const CollectiveDescriptor& d : collectiveDescriptors()) o.ops.push_back(d.name);
          } else if (findDescriptor(name)) {
            o.ops.push_back(findDescriptor(name)->name);
          } else {
            if (gRank == 0) std::fprintf(stderr, "strata-perf: unknown collective '%s'\n", name.c_str());
            usageAndExit(2);
          }
        }
      }
    } else if (a == "--impl") o.impls = splitList(value());
    else if (a == "--algo") o.algo = value();
    else if (a == "--mem") o.mem = value();
    else if (a == "--csv") o.csv = value();
    else if (a == "--plot") o.plot = value();
    else if (a == "--shift") o.shift = std::atoi(value());
    else if (a == "--phases") o.phases = true;
    else if (a == "--calibrate") o.calibrateFile = value();
    else if (a == "--algorithms") o.listAlgorithms = true;
    else {
      if (gRank == 0) std::fprintf(stderr, "strata-perf: unknown option '%s'\n", a.c_str());
      usageAndExit(2);
    }
  }
  (void)opIsCollective;
  for (const std::string& impl : o.impls) {
    if (impl != "strata" && !isMpiImpl(impl) && impl != "nccl") {
      if (gRank == 0) std::fprintf(stderr, "strata-perf: --impl %s is not available in this build\n", impl.c_str());
      usageAndExit(2);
    }
  }
  if (o.mem != "host" && o.mem != "device") {
    if (gRank == 0) std::fprintf(stderr, "strata-perf: --mem %s: expected host or device\n", o.mem.c_str());
    usageAndExit(2);
  }
  for (const std::string& impl : o.impls) {
    if (impl == "nccl" && o.mem != "device") {
      if (gRank == 0) std::fprintf(stderr, "strata-perf: --impl nccl needs --mem device\n");
      usageAndExit(2);
    }
  }
  if (o.iters < 1 || o.warmup < 0 || o.passes < 1 || o.minBytes > o.maxBytes || (o.stepBytes == 0 && o.stepFactor <= 1)) usageAndExit(2);
  return o;
}

std::vector<size_t> sweep(const Options& o) {
  std::vector<size_t> sizes;
  for (size_t s = o.minBytes; s <= o.maxBytes;) {
    sizes.push_back(s);
    const size_t next = o.stepBytes ? s + o.stepBytes : static_cast<size_t>(std::max<double>(s + 1, s * o.stepFactor));
    if (next <= s) break;
    s = next;
  }
  return sizes;
}

}  // namespace strata::perf
