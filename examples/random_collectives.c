/* An application outside the library: random collectives with random types, ops, counts, roots and
 * in-place flags, every result checked exactly against a reference computed here.
 *
 *   mpiexec -n 8 ./random_collectives [iterations] [seed]
 *   STRATA_RANKS_PER_NODE=4 mpiexec -n 8 ./random_collectives     (2 virtual nodes of 4)
 *
 * Every collective of the API, the irregular (v) variants and the barrier included. Inputs are small
 * integers, so every reduction is exact in every type and any order. Compiled with
 * -DRANDOM_COLLECTIVES_DEVICE the buffers are device memory, moved with cudaMemcpyAsync on the
 * application's own stream, and every call is ordered on that stream. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strata/strata.h>

static int rank, nranks;

/* ---- device buffers (built with -DRANDOM_COLLECTIVES_DEVICE and CUDA's runtime, or the CUDA
 * simulator in its place): every call runs on device mirrors of the host buffers, filled with
 * cudaMemcpyAsync on the application's own stream just before the call and copied back after it;
 * the checks read the host buffers as in the host build. ---- */
#ifdef RANDOM_COLLECTIVES_DEVICE
#include <cuda_runtime.h>
static cudaStream_t stream;
static unsigned char *host_send, *host_recv, *dev_send, *dev_recv;
static size_t mirror_bytes;
static void check_cuda(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) {
    fprintf(stderr, "rank %d: %s: %s\n", rank, what, cudaGetErrorString(rc));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}
static void mirror(unsigned char* send, unsigned char* recv, size_t bytes) {
  host_send = send, host_recv = recv, mirror_bytes = bytes;
  check_cuda(cudaMalloc((void**)&dev_send, bytes), "cudaMalloc");
  check_cuda(cudaMalloc((void**)&dev_recv, bytes), "cudaMalloc");
}
static void unmirror(void) {
  check_cuda(cudaFree(dev_send), "cudaFree");
  check_cuda(cudaFree(dev_recv), "cudaFree");
}
/* The device address of a host pointer into one of the mirrored buffers. */
static void* D(const void* p) {
  const unsigned char* h = (const unsigned char*)p;
  if (h >= host_send && h < host_send + mirror_bytes) return dev_send + (h - host_send);
  if (h >= host_recv && h < host_recv + mirror_bytes) return dev_recv + (h - host_recv);
  return (void*)p;
}
static void stage_in(void) {
  check_cuda(cudaMemcpyAsync(dev_send, host_send, mirror_bytes, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
  check_cuda(cudaMemcpyAsync(dev_recv, host_recv, mirror_bytes, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
}
static strataResult_t stage_out(strataResult_t rc) {
  check_cuda(cudaMemcpyAsync(host_send, dev_send, mirror_bytes, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  check_cuda(cudaMemcpyAsync(host_recv, dev_recv, mirror_bytes, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return rc;
}
#define STREAM stream
#define CALL(call) (stage_in(), stage_out(call))
#else
#define STREAM NULL
#define D(p) (p)
#define CALL(call) (call)
#define mirror(send, recv, bytes) ((void)0)
#define unmirror() ((void)0)
#endif

/* ---- a tiny deterministic generator, identical on every rank ---- */
static uint64_t rng_state;
static uint32_t next_random(void) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (uint32_t)(rng_state >> 33);
}

/* ---- element access by type (values are small integers: exact in every type) ---- */
static size_t type_size(strataDataType_t t) {
  static const size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
  return sizes[t];
}
static int is_float(strataDataType_t t) { return t == strataFloat16 || t == strataFloat32 || t == strataFloat64 || t == strataBfloat16; }
static int is_unsigned(strataDataType_t t) { return t == strataUint8 || t == strataUint32 || t == strataUint64; }

/* float -> half, round to nearest even (normal range and zero, which is all these values need). */
static uint16_t half_from_float(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
  u &= 0x7fffffffu;
  if (u == 0) return sign;
  uint32_t mant = (u & 0x7fffff) | 0x800000, shift = 13;
  int e = (int)(u >> 23) - 127 + 15;
  uint32_t q = mant >> shift, rest = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
  if (rest > half || (rest == half && (q & 1))) q++;
  if (q == 0x800) { q >>= 1; e++; }
  return (uint16_t)(sign | (uint16_t)(e << 10) | (q & 0x3ff));
}
static double half_to_double(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -v : v;
}
static uint16_t bf16_from_float(float f) { /* round to nearest even */
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
static double bf16_to_double(uint16_t b) { uint32_t u = (uint32_t)b << 16; float f; memcpy(&f, &u, 4); return f; }

static void put(strataDataType_t t, void* buf, size_t i, double v) {
  switch (t) {
    case strataInt8: ((int8_t*)buf)[i] = (int8_t)(int64_t)v; break;
    case strataUint8: ((uint8_t*)buf)[i] = (uint8_t)(int64_t)v; break;
    case strataInt32: ((int32_t*)buf)[i] = (int32_t)(int64_t)v; break;
    case strataUint32: ((uint32_t*)buf)[i] = (uint32_t)(int64_t)v; break;
    case strataInt64: ((int64_t*)buf)[i] = (int64_t)v; break;
    case strataUint64: ((uint64_t*)buf)[i] = (uint64_t)(int64_t)v; break;
    case strataFloat16: ((uint16_t*)buf)[i] = half_from_float((float)v); break;
    case strataFloat32: ((float*)buf)[i] = (float)v; break;
    case strataFloat64: ((double*)buf)[i] = v; break;
    case strataBfloat16: ((uint16_t*)buf)[i] = bf16_from_float((float)v); break;
    default: break;
  }
}
static double get(strataDataType_t t, const void* buf, size_t i) {
  switch (t) {
    case strataInt8: return ((const int8_t*)buf)[i];
    case strataUint8: return ((const uint8_t*)buf)[i];
    case strataInt32: return ((const int32_t*)buf)[i];
    case strataUint32: return ((const uint32_t*)buf)[i];
    case strataInt64: return (double)((const int64_t*)buf)[i];
    case strataUint64: return (double)((const uint64_t*)buf)[i];
    case strataFloat16: return half_to_double(((const uint16_t*)buf)[i]);
    case strataFloat32: return ((const float*)buf)[i];
    case strataFloat64: return ((const double*)buf)[i];
    case strataBfloat16: return bf16_to_double(((const uint16_t*)buf)[i]);
    default: return 0;
  }
}

/* Input of rank r at element i: small integers; products use {1,2} (and -1 for signed types). */
static double input(strataDataType_t t, strataRedOp_t op, int r, size_t i, unsigned iter) {
  unsigned h = (unsigned)(i * 2654435761u) ^ (unsigned)(r * 40503u) ^ (iter * 97u);
  h ^= h >> 13;
  static const double product_values[3] = {-1, 1, 2};
  if (op == strataProd) return is_unsigned(t) ? 1 + h % 2 : product_values[h % 3];
  if (op == strataMax || op == strataMin) return is_unsigned(t) ? h % 90 : (double)(int)(h % 90) - 45;
  return is_unsigned(t) ? h % 12 : (double)(int)(h % 12) - 6;
}
static double wrap(strataDataType_t t, double v) {
  if (is_float(t) || type_size(t) == 8) return v;
  double mod = ldexp(1.0, (int)type_size(t) * 8), w = fmod(v, mod);
  if (w < 0) w += mod;
  if (!is_unsigned(t) && w >= mod / 2) w -= mod;
  return w;
}
/* Reduction over ranks first..last of element i (no avg division). */
static double reduce_range(strataDataType_t t, strataRedOp_t op, int first, int last, size_t i, unsigned iter) {
  double acc = input(t, op, first, i, iter);
  for (int r = first + 1; r <= last; ++r) {
    double v = input(t, op, r, i, iter);
    if (op == strataProd) acc = wrap(t, acc * v);
    else if (op == strataMax) acc = acc > v ? acc : v;
    else if (op == strataMin) acc = acc < v ? acc : v;
    else acc = wrap(t, acc + v);
  }
  return acc;
}
/* Reduction over all ranks of element i, with avg = sum / p (truncating for integers). */
static double reference(strataDataType_t t, strataRedOp_t op, size_t i, unsigned iter) {
  double acc = input(t, op, 0, i, iter);
  for (int r = 1; r < nranks; ++r) {
    double v = input(t, op, r, i, iter);
    if (op == strataProd) acc = wrap(t, acc * v);
    else if (op == strataMax) acc = acc > v ? acc : v;
    else if (op == strataMin) acc = acc < v ? acc : v;
    else acc = wrap(t, acc + v);
  }
  if (op != strataAvg) return acc;
  if (!is_float(t)) return trunc(acc / nranks);
  if (t == strataFloat64) return acc / nranks;
  return (double)((float)acc / (float)nranks);
}
/* Bit-exact comparison through the type's own storage. */
static long checked = 0; /* values compared: a run that compared nothing proves nothing */
static int same(strataDataType_t t, const void* buf, size_t i, double want) {
  unsigned char w[8];
  ++checked;
  put(t, w, 0, want);
  return memcmp((const char*)buf + i * type_size(t), w, type_size(t)) == 0;
}

static const char* coll_names[] = {"allreduce", "broadcast", "reduce",     "allgather", "reducescatter",
                                   "gather",    "scatter",   "alltoall",   "scan",      "exscan",
                                   "shift",     "barrier",   "allgatherv", "gatherv",   "scatterv",
                                   "alltoallv", "reducescatterv"};
enum { NUM_COLLS = 17 };

/* Irregular layouts, the same on every rank (drawn from the shared generator): counts up to
 * `max`, some zero, and displacements with a gap after each block (which must stay untouched). */
static void irregular(size_t max, size_t* counts, size_t* displs, size_t* total) {
  size_t pos = 0;
  for (int r = 0; r < nranks; ++r) {
    counts[r] = next_random() % 4 == 0 ? 0 : next_random() % (max + 1);
    displs[r] = pos;
    pos += counts[r] + next_random() % 3;
  }
  *total = pos;
}
/* Sentinel for elements nobody may write: a value no input takes. */
static const double kUntouched = 99;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  int iterations = argc > 1 ? atoi(argv[1]) : 300;
  rng_state = argc > 2 ? strtoull(argv[2], NULL, 10) : 20261121ULL;

#ifdef RANDOM_COLLECTIVES_DEVICE
  int devices = 0;
  check_cuda(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  check_cuda(cudaSetDevice(rank % devices), "cudaSetDevice");
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
#endif
  strataComm_t comm;
  if (strataCommInitMpi(&comm, MPI_COMM_WORLD, NULL) != strataSuccess) {
    fprintf(stderr, "rank %d: strataCommInitMpi: %s\n", rank, strataGetLastError(NULL));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  long errors = 0, calls = 0;
  for (unsigned iter = 0; iter < (unsigned)iterations; ++iter) {
    int coll = (int)(next_random() % NUM_COLLS);
    strataDataType_t t = (strataDataType_t)(next_random() % strataNumTypes);
    strataRedOp_t op = (strataRedOp_t)(next_random() % strataNumOps);
    static const size_t special[] = {0, 1, 2, 3, 7, 13, 31, 1021, 4099};
    size_t n = next_random() % 3 == 0 ? special[next_random() % 9] : next_random() % 5000;
    int root = (int)(next_random() % (unsigned)nranks);
    int in_place = (int)(next_random() % 2);
    size_t es = type_size(t), np = n * (size_t)nranks;
    int shift = (int)(next_random() % (unsigned)(3 * nranks + 1)) - nranks;
    if ((coll == 8 || coll == 9) && op == strataAvg) op = strataSum; /* prefix averages are undefined */
    /* The irregular collectives' layouts: per rank (and for alltoallv per pair), on every rank. */
    size_t* counts = calloc((size_t)nranks, sizeof(size_t));
    size_t* displs = calloc((size_t)nranks, sizeof(size_t));
    size_t* pair = calloc((size_t)nranks * (size_t)nranks, sizeof(size_t)); /* pair[s*p+d]: s to d */
    size_t total = 0;
    if (coll >= 12 && coll <= 14) irregular(n, counts, displs, &total);
    if (coll == 15) for (size_t k = 0; k < (size_t)nranks * (size_t)nranks; ++k) pair[k] = next_random() % (n / 4 + 2);
    if (coll == 16) {
      irregular(n, counts, displs, &total);
      total = 0; /* reducescatterv's blocks are back to back */
      for (int r = 0; r < nranks; ++r) displs[r] = total, total += counts[r];
    }
    size_t cap = np + total + 1;
    if (coll == 15) {
      size_t row = 0, col = 0;
      for (int j = 0; j < nranks; ++j) row += pair[(size_t)rank * nranks + j], col += pair[(size_t)j * nranks + rank];
      cap = (row > col ? row : col) + 1;
    }
    unsigned char* send = malloc(cap * es);
    unsigned char* recv = malloc(cap * es);
    memset(send, 0, cap * es);
    memset(recv, 0, cap * es);
    mirror(send, recv, cap * es);
    strataResult_t rc = strataSuccess;
    size_t bad = 0;
    switch (coll) {
      case 0: /* allreduce */
        for (size_t i = 0; i < n; ++i) put(t, in_place ? recv : send, i, input(t, op, rank, i, iter));
        rc = CALL(strataAllReduce(D(in_place ? recv : send), D(recv), n, t, op, comm, STREAM));
        for (size_t i = 0; i < n && rc == strataSuccess; ++i) bad += !same(t, recv, i, reference(t, op, i, iter));
        break;
      case 1: /* broadcast */
        if (rank == root) for (size_t i = 0; i < n; ++i) put(t, in_place ? recv : send, i, input(t, op, root, i, iter));
        rc = CALL(strataBroadcast(D(in_place ? recv : send), D(recv), n, t, root, comm, STREAM));
        for (size_t i = 0; i < n && rc == strataSuccess; ++i) bad += !same(t, recv, i, input(t, op, root, i, iter));
        break;
      case 2: /* reduce */
        for (size_t i = 0; i < n; ++i) put(t, in_place ? recv : send, i, input(t, op, rank, i, iter));
        rc = CALL(strataReduce(D(in_place ? recv : send), D(recv), n, t, op, root, comm, STREAM));
        if (rank == root) for (size_t i = 0; i < n && rc == strataSuccess; ++i) bad += !same(t, recv, i, reference(t, op, i, iter));
        break;
      case 3: /* allgather */
        for (size_t i = 0; i < n; ++i) put(t, in_place ? recv + (size_t)rank * n * es : send, i, input(t, op, rank, i, iter));
        rc = CALL(strataAllGather(D(in_place ? recv + (size_t)rank * n * es : send), D(recv), n, t, comm, STREAM));
        for (size_t i = 0; i < np && rc == strataSuccess; ++i) bad += !same(t, recv, i, input(t, op, (int)(i / n), i % n, iter));
        break;
      case 4: { /* reduce-scatter */
        for (size_t i = 0; i < np; ++i) put(t, send, i, input(t, op, rank, i, iter));
        unsigned char* out = in_place ? send + (size_t)rank * n * es : recv;
        rc = CALL(strataReduceScatter(D(send), D(out), n, t, op, comm, STREAM));
        for (size_t i = 0; i < n && rc == strataSuccess; ++i) bad += !same(t, out, i, reference(t, op, (size_t)rank * n + i, iter));
        break;
      }
      case 5: { /* gather */
        unsigned char* mine = in_place && rank == root ? recv + (size_t)root * n * es : send;
        for (size_t i = 0; i < n; ++i) put(t, mine, i, input(t, op, rank, i, iter));
        rc = CALL(strataGather(D(mine), D(recv), n, t, root, comm, STREAM));
        if (rank == root)
          for (size_t i = 0; i < np && rc == strataSuccess; ++i) bad += !same(t, recv, i, input(t, op, (int)(i / n), i % n, iter));
        break;
      }
      case 6: { /* scatter */
        if (rank == root) for (size_t i = 0; i < np; ++i) put(t, send, i, input(t, op, root, i, iter));
        unsigned char* out = in_place && rank == root ? send + (size_t)root * n * es : recv;
        rc = CALL(strataScatter(D(send), D(out), n, t, root, comm, STREAM));
        for (size_t i = 0; i < n && rc == strataSuccess; ++i) bad += !same(t, out, i, input(t, op, root, (size_t)rank * n + i, iter));
        break;
      }
      case 7: /* alltoall: block j of rank r goes to rank j */
        for (size_t i = 0; i < np; ++i) put(t, in_place ? recv : send, i, input(t, op, rank, i, iter));
        rc = CALL(strataAlltoAll(D(in_place ? recv : send), D(recv), n, t, comm, STREAM));
        for (size_t i = 0; i < np && rc == strataSuccess; ++i)
          bad += !same(t, recv, i, input(t, op, (int)(i / n), (size_t)rank * n + i % n, iter));
        break;
      case 8: /* scan */
      case 9: /* exscan */
        for (size_t i = 0; i < n; ++i) put(t, in_place ? recv : send, i, input(t, op, rank, i, iter));
        rc = coll == 8 ? CALL(strataScan(D(in_place ? recv : send), D(recv), n, t, op, comm, STREAM))
                       : CALL(strataExscan(D(in_place ? recv : send), D(recv), n, t, op, comm, STREAM));
        if (coll == 8 || rank > 0)
          for (size_t i = 0; i < n && rc == strataSuccess; ++i)
            bad += !same(t, recv, i, reduce_range(t, op, 0, coll == 8 ? rank : rank - 1, i, iter));
        break;
      case 10: { /* shift: rank r's vector lands on rank r + shift */
        int from = ((rank - shift) % nranks + nranks) % nranks;
        for (size_t i = 0; i < n; ++i) put(t, in_place ? recv : send, i, input(t, op, rank, i, iter));
        rc = CALL(strataShift(D(in_place ? recv : send), D(recv), n, t, shift, comm, STREAM));
        for (size_t i = 0; i < n && rc == strataSuccess; ++i) bad += !same(t, recv, i, input(t, op, from, i, iter));
        break;
      }
      case 11: /* barrier */
        rc = CALL(strataBarrier(comm, STREAM));
        break;
      case 12:   /* allgatherv: block r (counts[r]) at displs[r], gaps untouched */
      case 13: { /* gatherv, at the root */
        for (size_t i = 0; i < total; ++i) put(t, recv, i, kUntouched);
        unsigned char* mine = in_place && (coll == 12 || rank == root) ? recv + displs[rank] * es : send;
        for (size_t i = 0; i < counts[rank]; ++i) put(t, mine, i, input(t, op, rank, i, iter));
        rc = coll == 12 ? CALL(strataAllGatherv(D(mine), counts[rank], D(recv), counts, displs, t, comm, STREAM))
                        : CALL(strataGatherv(D(mine), counts[rank], D(recv), counts, displs, t, root, comm, STREAM));
        if (rc == strataSuccess && (coll == 12 || rank == root)) {
          size_t next = 0;
          for (int r = 0; r < nranks; ++r) {
            for (; next < displs[r]; ++next) bad += !same(t, recv, next, kUntouched);
            for (size_t i = 0; i < counts[r]; ++i, ++next) bad += !same(t, recv, next, input(t, op, r, i, iter));
          }
          for (; next < total; ++next) bad += !same(t, recv, next, kUntouched);
        }
        break;
      }
      case 14: { /* scatterv: rank r gets the root's counts[r] elements at displs[r] */
        if (rank == root) for (size_t i = 0; i < total; ++i) put(t, send, i, input(t, op, root, i, iter));
        unsigned char* out = in_place && rank == root ? send + displs[root] * es : recv;
        rc = CALL(strataScatterv(D(send), counts, displs, D(out), counts[rank], t, root, comm, STREAM));
        for (size_t i = 0; i < counts[rank] && rc == strataSuccess; ++i)
          bad += !same(t, out, i, input(t, op, root, displs[rank] + i, iter));
        break;
      }
      case 15: { /* alltoallv: rank s sends pair[s][d] elements to d; blocks packed in rank order */
        size_t* sc = calloc((size_t)nranks, sizeof(size_t)), *sd = calloc((size_t)nranks, sizeof(size_t));
        size_t* rcnt = calloc((size_t)nranks, sizeof(size_t)), *rd = calloc((size_t)nranks, sizeof(size_t));
        size_t spos = 0, rpos = 0;
        for (int j = 0; j < nranks; ++j) {
          sc[j] = pair[(size_t)rank * nranks + j], sd[j] = spos, spos += sc[j];
          rcnt[j] = pair[(size_t)j * nranks + rank], rd[j] = rpos, rpos += rcnt[j];
        }
        /* Sender s's element i of the block for d: input(s, d * 4099 + i). */
        for (int j = 0; j < nranks; ++j)
          for (size_t i = 0; i < sc[j]; ++i) put(t, send, sd[j] + i, input(t, op, rank, (size_t)j * 4099 + i, iter));
        rc = CALL(strataAlltoAllv(D(send), sc, sd, D(recv), rcnt, rd, t, comm, STREAM));
        for (int j = 0; j < nranks && rc == strataSuccess; ++j)
          for (size_t i = 0; i < rcnt[j]; ++i) bad += !same(t, recv, rd[j] + i, input(t, op, j, (size_t)rank * 4099 + i, iter));
        free(sc), free(sd), free(rcnt), free(rd);
        break;
      }
      case 16: { /* reducescatterv: block r of the send buffer, reduced, lands on rank r */
        for (size_t i = 0; i < total; ++i) put(t, send, i, input(t, op, rank, i, iter));
        unsigned char* out = in_place ? send + displs[rank] * es : recv;
        rc = CALL(strataReduceScatterv(D(send), D(out), counts, t, op, comm, STREAM));
        for (size_t i = 0; i < counts[rank] && rc == strataSuccess; ++i)
          bad += !same(t, out, i, reference(t, op, displs[rank] + i, iter));
        break;
      }
    }
    if (rc != strataSuccess) {
      fprintf(stderr, "rank %d: %s failed: %s\n", rank, coll_names[coll], strataGetLastError(comm));
      bad += 1;
    }
    if (bad) fprintf(stderr, "rank %d: %s type %d op %d count %zu root %d in-place %d: %zu wrong\n", rank,
                     coll_names[coll], (int)t, (int)op, n, root, in_place, bad);
    errors += (long)bad;
    calls++;
    /* Nothing failed outside the calls either (device work queued for the progress thread, say): what
     * a watchdog thread would poll. */
    strataResult_t async = strataSuccess;
    const strataResult_t queried = strataCommGetAsyncError(comm, &async);
    if (queried != strataSuccess || async != strataSuccess) {
      fprintf(stderr, "rank %d: strataCommGetAsyncError: %s: %s\n", rank,
              strataGetErrorString(queried != strataSuccess ? queried : async), strataGetLastError(comm));
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    unmirror();
    free(send);
    free(recv);
    free(counts);
    free(displs);
    free(pair);
  }
  long total = 0, compared = 0;
  MPI_Allreduce(&errors, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&checked, &compared, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    const char* shape = getenv("STRATA_RANKS_PER_NODE");
    printf("random_collectives%s: %ld calls on %d ranks (nodes: %s): %ld values compared, %ld wrong\n", STREAM == NULL ? "" : " (device buffers)", calls,
           nranks, shape ? shape : "discovered", compared, total);
  }
  strataCommDestroy(comm);
  MPI_Finalize();
  return total == 0 && compared > 0 ? 0 : 1;
}
