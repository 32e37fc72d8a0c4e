/* Every collective the MPI face intercepts, called as an ordinary MPI program calls it: in place
 * and not, on MPI_COMM_WORLD, a duplicate and a split, with int, unsigned, long long, float and
 * double elements, contiguous derived types, and the cases that must go to the MPI library
 * (16-bit integers, a user-defined op, logical ops, a root out of range, MPI_IN_PLACE where MPI
 * forbids it), ranks passing different
 * datatypes of one type signature (strided, permuted) and negative displacements, and, where
 * Strata serves every call, its errors through the communicator's error handler. Built with
 * -DFACE_TEST_DEVICE, it also runs the collectives on device buffers. Each result is checked
 * against values computed here, rank by rank. Run with and without the face preloaded: the same
 * program, the same results. Exit status 0 when every check passed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
static int worldRank = 0;

#define CHECK(cond, ...)                                           \
  do {                                                             \
    if (!(cond)) {                                                 \
      if (failures++ < 20) {                                       \
        fprintf(stderr, "[rank %d] %s:%d: ", worldRank, __FILE__, __LINE__); \
        fprintf(stderr, __VA_ARGS__);                              \
        fprintf(stderr, "\n");                                     \
      }                                                            \
    }                                                              \
  } while (0)

/* The value rank r contributes at index i (small, so sums and products stay exact). */
static long long value(int r, int i) { return (long long)((r * 7 + i * 3) % 11) - 3; }

static void reductions(MPI_Comm comm, int n) {
  int p, me;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &me);
  /* Room for n per rank and for the irregular cases' up to 3 per rank. */
  const size_t big = (size_t)n * (size_t)p + 4 * (size_t)p + 8;
  int* in = malloc(sizeof(int) * big);
  int* out = malloc(sizeof(int) * big);
  double* din = malloc(sizeof(double) * (size_t)n + 1);
  double* dout = malloc(sizeof(double) * (size_t)n + 1);
  for (int i = 0; i < n; ++i) {
    in[i] = (int)value(me, i);
    din[i] = (double)value(me, i) * 0.5;
  }
  /* allreduce, sum and max, in place and not */
  MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, comm);
  for (int i = 0; i < n; ++i) {
    long long want = 0;
    for (int r = 0; r < p; ++r) want += value(r, i);
    CHECK(out[i] == want, "allreduce sum n=%d i=%d: %d != %lld", n, i, out[i], want);
  }
  memcpy(dout, din, sizeof(double) * (size_t)n);
  MPI_Allreduce(MPI_IN_PLACE, dout, n, MPI_DOUBLE, MPI_MAX, comm);
  for (int i = 0; i < n; ++i) {
    long long want = value(0, i);
    for (int r = 1; r < p; ++r) want = value(r, i) > want ? value(r, i) : want;
    CHECK(dout[i] == (double)want * 0.5, "allreduce max in place n=%d i=%d", n, i);
  }
  /* reduce to every root, min, in place at the root */
  for (int root = 0; root < p; ++root) {
    memcpy(out, in, sizeof(int) * (size_t)n);
    MPI_Reduce(me == root ? MPI_IN_PLACE : in, me == root ? out : NULL, n, MPI_INT, MPI_MIN, root, comm);
    if (me == root) {
      for (int i = 0; i < n; ++i) {
        long long want = value(0, i);
        for (int r = 1; r < p; ++r) want = value(r, i) < want ? value(r, i) : want;
        CHECK(out[i] == want, "reduce min root=%d n=%d i=%d", root, n, i);
      }
    }
  }
  /* scan and exscan (sum), product over unsigned long long */
  MPI_Scan(in, out, n, MPI_INT, MPI_SUM, comm);
  for (int i = 0; i < n; ++i) {
    long long want = 0;
    for (int r = 0; r <= me; ++r) want += value(r, i);
    CHECK(out[i] == want, "scan n=%d i=%d", n, i);
  }
  memcpy(out, in, sizeof(int) * (size_t)n);
  MPI_Exscan(MPI_IN_PLACE, out, n, MPI_INT, MPI_SUM, comm);
  if (me > 0) {
    for (int i = 0; i < n; ++i) {
      long long want = 0;
      for (int r = 0; r < me; ++r) want += value(r, i);
      CHECK(out[i] == want, "exscan in place n=%d i=%d", n, i);
    }
  }
  /* Rank 0's receive buffer is not significant in an exscan: it may pass none. */
  MPI_Exscan(in, me == 0 ? NULL : out, n, MPI_INT, MPI_SUM, comm);
  if (me > 0) {
    for (int i = 0; i < n; ++i) {
      long long want = 0;
      for (int r = 0; r < me; ++r) want += value(r, i);
      CHECK(out[i] == want, "exscan with no receive buffer on rank 0 n=%d i=%d", n, i);
    }
  }
  unsigned long long up = (unsigned long long)(me % 3 + 1), uprod = 0;
  MPI_Allreduce(&up, &uprod, 1, MPI_UNSIGNED_LONG_LONG, MPI_PROD, comm);
  unsigned long long uwant = 1;
  for (int r = 0; r < p; ++r) uwant *= (unsigned long long)(r % 3 + 1);
  CHECK(uprod == uwant, "allreduce prod unsigned long long");
  /* reduce-scatter block and irregular, in place and not */
  for (int i = 0; i < n * p; ++i) in[i] = (int)value(me, i);
  MPI_Reduce_scatter_block(in, out, n, MPI_INT, MPI_SUM, comm);
  for (int i = 0; i < n; ++i) {
    long long want = 0;
    for (int r = 0; r < p; ++r) want += value(r, me * n + i);
    CHECK(out[i] == want, "reduce_scatter_block n=%d i=%d", n, i);
  }
  memcpy(out, in, sizeof(int) * (size_t)n * (size_t)p);
  MPI_Reduce_scatter_block(MPI_IN_PLACE, out, n, MPI_INT, MPI_SUM, comm);
  for (int i = 0; i < n; ++i) {
    long long want = 0;
    for (int r = 0; r < p; ++r) want += value(r, me * n + i);
    CHECK(out[i] == want, "reduce_scatter_block in place n=%d i=%d", n, i);
  }
  for (int i = n; i < n * p; ++i) CHECK(out[i] == in[i], "reduce_scatter_block in place n=%d: input %d changed", n, i);
  int* counts = malloc(sizeof(int) * (size_t)p);
  int total = 0;
  for (int r = 0; r < p; ++r) total += counts[r] = (n + r) % 4;
  int prefix = 0;
  for (int r = 0; r < me; ++r) prefix += counts[r];
  {
    for (int i = 0; i < total; ++i) in[i] = (int)value(me, i);
    memcpy(out, in, sizeof(int) * (size_t)total);
    MPI_Reduce_scatter(MPI_IN_PLACE, out, counts, MPI_INT, MPI_SUM, comm);
    for (int i = 0; i < counts[me]; ++i) {
      long long want = 0;
      for (int r = 0; r < p; ++r) want += value(r, prefix + i);
      CHECK(out[i] == want, "reduce_scatter in place n=%d i=%d", n, i);
    }
    /* Past the result, the buffer keeps its input (as MPI libraries leave it). */
    for (int i = counts[me]; i < total; ++i) CHECK(out[i] == in[i], "reduce_scatter in place n=%d: input %d changed", n, i);
  }
  free(counts);
  free(in);
  free(out);
  free(din);
  free(dout);
}

static void movement(MPI_Comm comm, int n) {
  int p, me;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &me);
  const size_t big = (size_t)n * (size_t)p + 4 * (size_t)p + 8;  /* the irregular cases need up to 3 per rank */
  int* a = malloc(sizeof(int) * big);
  int* b = malloc(sizeof(int) * big);
  /* bcast from every root, with a contiguous derived type of two ints */
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  for (int root = 0; root < p; ++root) {
    for (int i = 0; i < 2 * (n / 2); ++i) a[i] = me == root ? (int)value(root, i) : -99;
    MPI_Bcast(a, n / 2, pair, root, comm);
    for (int i = 0; i < 2 * (n / 2); ++i) CHECK(a[i] == value(root, i), "bcast root=%d n=%d i=%d", root, n, i);
  }
  /* allgather, in place and with different send and receive types of one signature */
  for (int i = 0; i < n; ++i) a[i] = (int)value(me, i);
  MPI_Allgather(a, n, MPI_INT, b, n, MPI_INT, comm);
  for (int r = 0; r < p; ++r)
    for (int i = 0; i < n; ++i) CHECK(b[r * n + i] == value(r, i), "allgather n=%d r=%d i=%d", n, r, i);
  for (int i = 0; i < n; ++i) b[me * n + i] = (int)value(me, i) + 1;
  MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, n, MPI_INT, comm);
  for (int r = 0; r < p; ++r)
    for (int i = 0; i < n; ++i) CHECK(b[r * n + i] == value(r, i) + 1, "allgather in place n=%d", n);
  if (n % 2 == 0) {
    MPI_Allgather(a, n / 2, pair, b, n, MPI_INT, comm);
    for (int r = 0; r < p; ++r)
      for (int i = 0; i < n; ++i) CHECK(b[r * n + i] == value(r, i), "allgather pair->int n=%d", n);
  }
  /* allgatherv with gaps */
  int* counts = malloc(sizeof(int) * (size_t)p);
  int* displs = malloc(sizeof(int) * (size_t)p);
  int at = 0;
  for (int r = 0; r < p; ++r) {
    counts[r] = (n + r) % 3;
    displs[r] = at + 1;
    at += counts[r] + 1;
  }
  {
    for (int i = 0; i < counts[me]; ++i) a[i] = (int)value(me, i);
    MPI_Allgatherv(a, counts[me], MPI_INT, b, counts, displs, MPI_INT, comm);
    for (int r = 0; r < p; ++r)
      for (int i = 0; i < counts[r]; ++i) CHECK(b[displs[r] + i] == value(r, i), "allgatherv n=%d r=%d", n, r);
  }
  /* alltoall, in place and not; alltoallv */
  for (int r = 0; r < p; ++r)
    for (int i = 0; i < n; ++i) a[r * n + i] = (int)(me * 1000 + r * 10 + i % 10);
  MPI_Alltoall(a, n, MPI_INT, b, n, MPI_INT, comm);
  for (int r = 0; r < p; ++r)
    for (int i = 0; i < n; ++i) CHECK(b[r * n + i] == r * 1000 + me * 10 + i % 10, "alltoall n=%d", n);
  memcpy(b, a, sizeof(int) * (size_t)n * (size_t)p);
  MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, n, MPI_INT, comm);
  for (int r = 0; r < p; ++r)
    for (int i = 0; i < n; ++i) CHECK(b[r * n + i] == r * 1000 + me * 10 + i % 10, "alltoall in place n=%d", n);
  int* sc = malloc(sizeof(int) * (size_t)p);
  int* sd = malloc(sizeof(int) * (size_t)p);
  int* rc = malloc(sizeof(int) * (size_t)p);
  int* rd = malloc(sizeof(int) * (size_t)p);
  int so = 0, ro = 0;
  for (int r = 0; r < p; ++r) {
    sc[r] = (me + r + n) % 3;
    sd[r] = so;
    so += sc[r];
    rc[r] = (r + me + n) % 3;
    rd[r] = ro;
    ro += rc[r];
  }
  for (int r = 0; r < p; ++r)
    for (int i = 0; i < sc[r]; ++i) a[sd[r] + i] = me * 100 + r * 10 + i;
  MPI_Alltoallv(a, sc, sd, MPI_INT, b, rc, rd, MPI_INT, comm);
  for (int r = 0; r < p; ++r)
    for (int i = 0; i < rc[r]; ++i) CHECK(b[rd[r] + i] == r * 100 + me * 10 + i, "alltoallv n=%d r=%d", n, r);
  /* gather, gatherv, scatter, scatterv from every root, in place at the root */
  for (int root = 0; root < p; ++root) {
    for (int i = 0; i < n; ++i) a[i] = (int)value(me, i);
    if (me == root) {
      for (int i = 0; i < n; ++i) b[root * n + i] = (int)value(me, i);
      MPI_Gather(MPI_IN_PLACE, n, MPI_INT, b, n, MPI_INT, root, comm);
      for (int r = 0; r < p; ++r)
        for (int i = 0; i < n; ++i) CHECK(b[r * n + i] == value(r, i), "gather root=%d n=%d", root, n);
    } else {
      MPI_Gather(a, n, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, root, comm);
    }
    {
      for (int i = 0; i < counts[me]; ++i) a[i] = (int)value(me, i) * 2;
      MPI_Gatherv(a, counts[me], MPI_INT, b, counts, displs, MPI_INT, root, comm);
      if (me == root)
        for (int r = 0; r < p; ++r)
          for (int i = 0; i < counts[r]; ++i) CHECK(b[displs[r] + i] == value(r, i) * 2, "gatherv root=%d", root);
    }
    for (int r = 0; r < p; ++r)
      for (int i = 0; i < n; ++i) a[r * n + i] = me == root ? r * 100 + i : -1;
    if (me == root) {
      MPI_Scatter(a, n, MPI_INT, MPI_IN_PLACE, n, MPI_INT, root, comm);
      for (int i = 0; i < n; ++i) CHECK(a[root * n + i] == root * 100 + i, "scatter in place root=%d", root);
    } else {
      MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, b, n, MPI_INT, root, comm);
      for (int i = 0; i < n; ++i) CHECK(b[i] == me * 100 + i, "scatter root=%d n=%d i=%d", root, n, i);
    }
    {
      for (int r = 0; r < p; ++r)
        for (int i = 0; i < counts[r]; ++i) a[displs[r] + i] = me == root ? r * 7 + i : -1;
      MPI_Scatterv(a, counts, displs, MPI_INT, b, counts[me], MPI_INT, root, comm);
      for (int i = 0; i < counts[me]; ++i) CHECK(b[i] == me * 7 + i, "scatterv root=%d", root);
    }
  }
  MPI_Barrier(comm);
  MPI_Type_free(&pair);
  free(a);
  free(b);
  free(counts);
  free(displs);
  free(sc);
  free(sd);
  free(rc);
  free(rd);
}

static void userMax(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] = ((int*)in)[i] > ((int*)inout)[i] ? ((int*)in)[i] : ((int*)inout)[i];
}

/* Calls the face must hand to the MPI library: the results are MPI's, and must be right. */
static void passedThrough(MPI_Comm comm) {
  int p, me;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &me);
  short s = (short)(me + 1), ssum = 0;
  MPI_Allreduce(&s, &ssum, 1, MPI_SHORT, MPI_SUM, comm);
  CHECK(ssum == p * (p + 1) / 2, "allreduce of MPI_SHORT");
  int flag = me == 0, any = 0;
  MPI_Allreduce(&flag, &any, 1, MPI_INT, MPI_LOR, comm);
  CHECK(any == 1, "allreduce MPI_LOR");
  MPI_Op op;
  MPI_Op_create(userMax, 1, &op);
  int x = me * 3, mx = -1;
  MPI_Allreduce(&x, &mx, 1, MPI_INT, op, comm);
  CHECK(mx == (p - 1) * 3, "allreduce with a user op");
  MPI_Op_free(&op);
}

/* Ranks passing different datatypes of one type signature (MPI allows it): contiguous on some
 * ranks, strided or permuted on others. Every rank must take the same path (Strata or the MPI
 * library), so a rank with a non-contiguous type packs it instead of passing the call on. */
static void mixedLayouts(MPI_Comm comm) {
  int p, me;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &me);
  MPI_Datatype strided, swapped;  /* 3 ints every other int; 2 ints, second one first */
  MPI_Type_vector(3, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  const int blocklengths[2] = {1, 1};
  const MPI_Aint places[2] = {sizeof(int), 0};
  MPI_Type_create_hindexed(2, blocklengths, places, MPI_INT, &swapped);
  MPI_Type_commit(&swapped);
  /* bcast: the root sends 3 contiguous ints, odd ranks receive them strided (gaps untouched) */
  for (int root = 0; root < p; ++root) {
    int v[6] = {-1, -1, -1, -1, -1, -1};
    if (me == root) v[0] = 10 + root, v[1] = 20, v[2] = 30;
    if (me == root || me % 2 == 0) {
      MPI_Bcast(v, 3, MPI_INT, root, comm);
      CHECK(v[0] == 10 + root && v[1] == 20 && v[2] == 30, "bcast contiguous root=%d", root);
    } else {
      MPI_Bcast(v, 1, strided, root, comm);
      CHECK(v[0] == 10 + root && v[2] == 20 && v[4] == 30 && v[1] == -1 && v[3] == -1 && v[5] == -1,
            "bcast into a strided type root=%d: %d %d %d %d %d", root, v[0], v[1], v[2], v[3], v[4]);
    }
  }
  /* bcast from a root that sends one int three times (an int resized to extent 0: sending
   * overlapping entries is legal) into a type of negative extent on odd ranks (an int resized to
   * extent -4: element k lies k ints before the buffer) and contiguous ints on the others: legal
   * datatypes of one signature, packed where not contiguous. */
  MPI_Datatype backwards, onePlace;
  MPI_Type_create_resized(MPI_INT, 0, -(MPI_Aint)sizeof(int), &backwards);
  MPI_Type_commit(&backwards);
  MPI_Type_create_resized(MPI_INT, 0, 0, &onePlace);
  MPI_Type_commit(&onePlace);
  for (int root = 0; root < p; ++root) {
    int v[5] = {-1, -1, -1, -1, -1};
    if (me == root) {
      v[0] = 7 + root;
      MPI_Bcast(v, 3, onePlace, root, comm);
      v[0] = 10 + root, v[1] = 20, v[2] = 30;
      MPI_Bcast(v, 3, MPI_INT, root, comm);
    } else if (me % 2 == 1) {
      MPI_Bcast(v + 2, 3, backwards, root, comm);
      CHECK(v[0] == 7 + root && v[1] == 7 + root && v[2] == 7 + root && v[3] == -1, "bcast from a zero extent root=%d",
            root);
      MPI_Bcast(v + 2, 3, backwards, root, comm);
      CHECK(v[2] == 10 + root && v[1] == 20 && v[0] == 30 && v[3] == -1, "bcast into a negative extent root=%d", root);
    } else {
      MPI_Bcast(v, 3, MPI_INT, root, comm);
      CHECK(v[0] == 7 + root && v[2] == 7 + root && v[3] == -1, "bcast from a zero extent root=%d", root);
      MPI_Bcast(v, 3, MPI_INT, root, comm);
      CHECK(v[0] == 10 + root && v[1] == 20 && v[2] == 30, "bcast contiguous root=%d", root);
    }
  }
  MPI_Type_free(&backwards);
  MPI_Type_free(&onePlace);
  /* allgather: odd ranks send their 2 ints permuted (the type map's order is what travels) */
  int* all = malloc(sizeof(int) * 2 * (size_t)p);
  int mine[2] = {me * 10, me * 10 + 1};
  if (me % 2 == 1) MPI_Allgather(mine, 1, swapped, all, 2, MPI_INT, comm);
  else MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, comm);
  for (int r = 0; r < p; ++r) {
    const int first = r % 2 == 1 ? r * 10 + 1 : r * 10, second = r % 2 == 1 ? r * 10 : r * 10 + 1;
    CHECK(all[2 * r] == first && all[2 * r + 1] == second, "allgather with a permuted send type from rank %d", r);
  }
  /* allgatherv with negative displacements: the receive buffer is given by a pointer past the blocks */
  int* base = malloc(sizeof(int) * (3 * (size_t)p + 2));
  for (int i = 0; i < 3 * p + 2; ++i) base[i] = -7;
  int* counts = malloc(sizeof(int) * (size_t)p);
  int* displs = malloc(sizeof(int) * (size_t)p);
  for (int r = 0; r < p; ++r) {
    counts[r] = r % 3;
    displs[r] = -3 * (p - r);  /* block r at base + 3r + 1 ... relative to base + 3p + 1 */
  }
  int* end = base + 3 * p + 1;
  int send3[3] = {me * 5, me * 5 + 1, me * 5 + 2};
  MPI_Allgatherv(send3, counts[me], MPI_INT, end, counts, displs, MPI_INT, comm);
  for (int r = 0; r < p; ++r) {
    for (int i = 0; i < 3; ++i) {
      const int got = end[displs[r] + i];
      CHECK(i < counts[r] ? got == r * 5 + i : got == -7, "allgatherv negative displacement r=%d i=%d: %d", r, i, got);
    }
  }
  /* allgatherv whose empty blocks' displacements are garbage (MPI reads none of them) */
  for (int r = 0; r < p; ++r) {
    counts[r] = r % 2;
    displs[r] = counts[r] == 0 ? (r % 4 == 0 ? -(1 << 29) : 1 << 29) : r;
  }
  for (int i = 0; i < 3 * p + 2; ++i) base[i] = -7;
  MPI_Allgatherv(send3, counts[me], MPI_INT, base, counts, displs, MPI_INT, comm);
  for (int r = 0; r < p; ++r) {
    CHECK(r % 2 == 1 ? base[r] == r * 5 : base[r] == -7, "allgatherv with garbage displacements of empty blocks r=%d: %d",
          r, base[r]);
  }
  /* gather and scatter with a strided type at the root only */
  for (int root = 0; root < p; ++root) {
    int* g = malloc(sizeof(int) * 6 * (size_t)p);
    for (int i = 0; i < 6 * p; ++i) g[i] = -1;
    int three[3] = {me, me + 100, me + 200};
    if (me == root) {
      MPI_Gather(three, 3, MPI_INT, g, 1, strided, root, comm);
      for (int r = 0; r < p; ++r) {
        /* block r is one strided element, at r extents (5 ints) */
        CHECK(g[5 * r] == r && g[5 * r + 2] == r + 100 && g[5 * r + 4] == r + 200 && g[5 * r + 1] == -1,
              "gather into a strided type root=%d r=%d", root, r);
      }
      MPI_Scatter(g, 1, strided, three, 3, MPI_INT, root, comm);
    } else {
      MPI_Gather(three, 3, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, root, comm);
      three[0] = three[1] = three[2] = -5;
      MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, three, 3, MPI_INT, root, comm);
    }
    CHECK(three[0] == me && three[1] == me + 100 && three[2] == me + 200, "scatter from a strided type root=%d", root);
    free(g);
  }
  /* alltoallv: even ranks send permuted pairs, odd ranks contiguous */
  int* sendv = malloc(sizeof(int) * 2 * (size_t)p);
  int* recvv = malloc(sizeof(int) * 2 * (size_t)p);
  int* one = malloc(sizeof(int) * (size_t)p);
  int* two = malloc(sizeof(int) * (size_t)p);
  int* at1 = malloc(sizeof(int) * (size_t)p);
  int* at2 = malloc(sizeof(int) * (size_t)p);
  for (int r = 0; r < p; ++r) {
    sendv[2 * r] = me * 100 + r * 2;
    sendv[2 * r + 1] = me * 100 + r * 2 + 1;
    one[r] = 1, two[r] = 2, at1[r] = r, at2[r] = 2 * r;
  }
  if (me % 2 == 0) MPI_Alltoallv(sendv, one, at1, swapped, recvv, two, at2, MPI_INT, comm);
  else MPI_Alltoallv(sendv, two, at2, MPI_INT, recvv, two, at2, MPI_INT, comm);
  for (int r = 0; r < p; ++r) {
    const int lo = r * 100 + me * 2, hi = lo + 1;
    const int first = r % 2 == 0 ? hi : lo, second = r % 2 == 0 ? lo : hi;
    CHECK(recvv[2 * r] == first && recvv[2 * r + 1] == second, "alltoallv with a permuted type from rank %d", r);
  }
  free(sendv), free(recvv), free(one), free(two), free(at1), free(at2);
  free(base), free(counts), free(displs), free(all);
  MPI_Type_free(&strided);
  MPI_Type_free(&swapped);
}

/* MPI_IN_PLACE where MPI does not allow it (MPI-3.1 5.5, 5.6, 5.9): erroneous, and MPI's to report,
 * so with MPI_ERRORS_RETURN every rank gets an error code (each rank here misuses it, so none
 * waits for another). The face must not take the marker for a buffer. */
static void inPlaceWhereMpiForbidsIt(MPI_Comm comm) {
  int p, me;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &me);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int* a = calloc((size_t)p + 1, sizeof(int));
  int* b = calloc((size_t)p + 1, sizeof(int));
  const int root = p - 1, isRoot = me == root;
  /* Open MPI 4.1 reports this one through MPI_COMM_WORLD's handler, whatever the communicator. */
  if (comm == MPI_COMM_WORLD) {
    CHECK(MPI_Allreduce(a, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, comm) != MPI_SUCCESS, "allreduce into MPI_IN_PLACE");
  }
  CHECK(MPI_Reduce(isRoot ? a : MPI_IN_PLACE, isRoot ? MPI_IN_PLACE : b, 1, MPI_INT, MPI_SUM, root, comm) != MPI_SUCCESS,
        "reduce with MPI_IN_PLACE off the root's send buffer");
  CHECK(MPI_Gather(isRoot ? a : MPI_IN_PLACE, 1, MPI_INT, isRoot ? MPI_IN_PLACE : b, 1, MPI_INT, root, comm) != MPI_SUCCESS,
        "gather with MPI_IN_PLACE off the root's send buffer");
  CHECK(MPI_Scatter(isRoot ? MPI_IN_PLACE : a, 1, MPI_INT, isRoot ? b : MPI_IN_PLACE, 1, MPI_INT, root, comm) != MPI_SUCCESS,
        "scatter with MPI_IN_PLACE off the root's receive buffer");
  CHECK(MPI_Allgather(a, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, comm) != MPI_SUCCESS, "allgather into MPI_IN_PLACE");
  CHECK(MPI_Reduce_scatter_block(a, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, comm) != MPI_SUCCESS,
        "reduce_scatter_block into MPI_IN_PLACE");
  free(a), free(b);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL);
}

/* A root out of range is MPI's to report: with MPI_ERRORS_RETURN, every rank gets an error code. */
static void rootOutOfRange(MPI_Comm comm) {
  int p;
  MPI_Comm_size(comm, &p);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int v = 1;
  CHECK(MPI_Bcast(&v, 1, MPI_INT, p, comm) != MPI_SUCCESS, "bcast with root %d returned success", p);
  int w = 0;
  CHECK(MPI_Reduce(&v, &w, 1, MPI_INT, MPI_SUM, -2, comm) != MPI_SUCCESS, "reduce with root -2 returned success");
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL);
}

/* A v-variant's arrays that are erroneous on every rank (missing displacements, a negative count)
 * are MPI's to report, as the arguments of regular calls are: with MPI_ERRORS_RETURN every rank
 * gets an error code, and the communicator serves the next call (the face took them for arguments
 * MPI reports, not for a rank that lacks the memory to take its part, which would have aborted it).
 * MPI need not detect these (the standard leaves erroneous calls undefined); Open MPI's parameter
 * checks, on by default, do, before any message. Only calls seen reported with CI's Open MPI
 * 4.1.4: its allgatherv with a negative receive count crashed there on 1 and 2 ranks. */
static void vArraysMpiReports(MPI_Comm comm) {
  int p, me;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &me);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int* counts = calloc((size_t)p, sizeof(int));
  int* displs = calloc((size_t)p, sizeof(int));
  int* a = calloc((size_t)p + 1, sizeof(int));
  int* b = calloc((size_t)p + 1, sizeof(int));
  for (int r = 0; r < p; ++r) counts[r] = 1, displs[r] = r;
  CHECK(MPI_Allgatherv(a, 1, MPI_INT, b, counts, NULL, MPI_INT, comm) != MPI_SUCCESS,
        "allgatherv without displacements returned success");
  CHECK(MPI_Alltoallv(a, counts, displs, MPI_INT, b, counts, NULL, MPI_INT, comm) != MPI_SUCCESS,
        "alltoallv without receive displacements returned success");
  counts[p - 1] = -1;
  CHECK(MPI_Reduce_scatter(a, b, counts, MPI_INT, MPI_SUM, comm) != MPI_SUCCESS,
        "reduce_scatter with a negative receive count returned success");
  CHECK(MPI_Alltoallv(a, counts, displs, MPI_INT, b, counts, displs, MPI_INT, comm) != MPI_SUCCESS,
        "alltoallv with a negative count returned success");
  counts[p - 1] = 1;
  for (int r = 0; r < p; ++r) a[r] = 100 * me + r, b[r] = -1;
  const int rc = MPI_Allgatherv(a, 1, MPI_INT, b, counts, displs, MPI_INT, comm);
  int right = rc == MPI_SUCCESS;
  for (int r = 0; r < p && right; ++r) right = b[r] == 100 * r;
  CHECK(right, "an allgatherv after the erroneous ones: %d", rc);
  free(counts), free(displs), free(a), free(b);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL);
}

/* Strata's own errors through the face, where Strata serves every call (the face preloaded with
 * STRATA_MPI_NATIVE=0, on a communicator the node shape fits): ranks that pass different counts, then different ops, to an allreduce on a
 * fresh communicator (MPI calls that erroneous; Strata's plan agreement refuses it on every rank,
 * and the communicator stays usable). The code's class is MPI_ERR_OTHER, its string Strata's
 * message, the receive buffer untouched; with a user error handler, the handler gets that code. */
static int handledCode = MPI_SUCCESS;
static void recordCode(MPI_Comm* comm, int* code, ...) {
  (void)comm;
  handledCode = *code;
}

/* Whether the face is preloaded and serves every call with Strata's own algorithms
 * (STRATA_MPI_NATIVE=0), on a communicator of `p` ranks with peers: the checks of errors only
 * Strata makes. */
static int strataServesWithPeers(int p) {
  const char* preload = getenv("LD_PRELOAD");
  const char* native = getenv("STRATA_MPI_NATIVE");
  return p >= 2 && preload != NULL && strstr(preload, "strata_mpi") != NULL && native != NULL && strcmp(native, "0") == 0;
}

static void strataErrorsReachTheHandler(MPI_Comm parent) {
  int p, me;
  MPI_Comm_size(parent, &p);
  MPI_Comm_rank(parent, &me);
  if (!strataServesWithPeers(p)) return;
  MPI_Comm comm;
  MPI_Comm_dup(parent, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int send[3] = {1, 2, 3}, recv[3] = {-7, -7, -7};
  int rc = MPI_Allreduce(send, recv, me == 0 ? 2 : 1, MPI_INT, MPI_SUM, comm);
  CHECK(rc != MPI_SUCCESS, "an allreduce whose ranks pass different counts returned success");
  if (rc != MPI_SUCCESS) {
    int cls = MPI_SUCCESS, len = 0;
    char text[MPI_MAX_ERROR_STRING] = "";
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, text, &len);
    CHECK(cls == MPI_ERR_OTHER, "the refused allreduce's code %d is of class %d, not MPI_ERR_OTHER", rc, cls);
    CHECK(strstr(text, "strata-mpi: MPI_allreduce: invalid usage") != NULL && strstr(text, "passed count") != NULL,
          "the refused allreduce's error string: '%s'", text);
  }
  CHECK(recv[0] == -7 && recv[1] == -7 && recv[2] == -7, "a refused allreduce wrote its receive buffer");
  int one = 1, sum = 0;
  CHECK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS && sum == p,
        "an allreduce after a refused one: %d, not %d", sum, p);

  MPI_Errhandler handler;
  MPI_Comm_create_errhandler(recordCode, &handler);
  MPI_Comm_set_errhandler(comm, handler);
  handledCode = MPI_SUCCESS;
  rc = MPI_Allreduce(send, recv, 3, MPI_INT, me == 0 ? MPI_MAX : MPI_SUM, comm);
  int cls = MPI_SUCCESS;
  if (handledCode != MPI_SUCCESS) MPI_Error_class(handledCode, &cls);
  CHECK(rc != MPI_SUCCESS && handledCode == rc && cls == MPI_ERR_OTHER,
        "an allreduce whose ranks pass different ops: returned %d, the handler got %d of class %d", rc, handledCode, cls);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL);
  MPI_Errhandler_free(&handler);
  MPI_Comm_free(&comm);
}

#ifdef FACE_TEST_DEVICE
/* ---- Device buffers (built with -DFACE_TEST_DEVICE against CUDA's runtime or the CUDA simulator;
 * run through the face only: the MPI library here cannot read device memory). */
#include <cuda_runtime.h>

#define CUDA_OK(call) CHECK((call) == cudaSuccess, "%s failed", #call)

static int* deviceCopy(const int* host, size_t n) {
  int* d = NULL;
  CUDA_OK(cudaMalloc((void**)&d, sizeof(int) * (n ? n : 1)));
  if (n) CUDA_OK(cudaMemcpy(d, host, sizeof(int) * n, cudaMemcpyHostToDevice));
  return d;
}
static void hostCopy(int* host, const int* d, size_t n) {
  if (n) CUDA_OK(cudaMemcpy(host, d, sizeof(int) * n, cudaMemcpyDeviceToHost));
}

static void deviceBuffers(MPI_Comm comm, int n) {
  int p, me;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &me);
  const size_t all = (size_t)n * (size_t)p;
  const size_t room = (all > 2 * (size_t)n ? all : 2 * (size_t)n) + 8;  /* the strided bcast needs 2n */
  int* h = malloc(sizeof(int) * room);
  int* g = malloc(sizeof(int) * room);
  /* allreduce in place */
  for (int i = 0; i < n; ++i) h[i] = (int)value(me, i);
  int* d = deviceCopy(h, (size_t)n);
  MPI_Allreduce(MPI_IN_PLACE, d, n, MPI_INT, MPI_SUM, comm);
  hostCopy(g, d, (size_t)n);
  for (int i = 0; i < n; ++i) {
    long long want = 0;
    for (int r = 0; r < p; ++r) want += value(r, i);
    CHECK(g[i] == want, "device allreduce n=%d i=%d", n, i);
  }
  cudaFree(d);
  /* bcast from the last rank, into a strided type on odd ranks (packed through the host) */
  const int root = p - 1;
  for (int i = 0; i < 2 * n; ++i) h[i] = me == root ? (int)value(root, i) : -1;
  d = deviceCopy(h, 2 * (size_t)n);
  if (n > 0 && me % 2 == 1 && me != root) {
    MPI_Datatype strided;
    MPI_Type_vector(n, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    MPI_Bcast(d, 1, strided, root, comm);
    MPI_Type_free(&strided);
    hostCopy(g, d, 2 * (size_t)n);
    for (int i = 0; i < n; ++i) CHECK(g[2 * i] == value(root, i) && g[2 * i + 1] == -1, "device strided bcast n=%d i=%d", n, i);
  } else {
    MPI_Bcast(d, n, MPI_INT, root, comm);
    hostCopy(g, d, (size_t)n);
    for (int i = 0; i < n; ++i) CHECK(g[i] == value(root, i), "device bcast n=%d i=%d", n, i);
  }
  cudaFree(d);
  /* allgather in place, alltoall */
  for (size_t i = 0; i < all; ++i) h[i] = (int)value(me, (int)i);
  d = deviceCopy(h, all);
  MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, d, n, MPI_INT, comm);
  hostCopy(g, d, all);
  for (int r = 0; r < p; ++r)
    for (int i = 0; i < n; ++i) CHECK(g[r * n + i] == value(r, r * n + i), "device allgather in place n=%d r=%d", n, r);
  int* e = deviceCopy(h, all);
  MPI_Alltoall(d, n, MPI_INT, e, n, MPI_INT, comm);
  hostCopy(g, e, all);
  /* every rank's d now holds block r = value(r, r*n + i): from each rank, block `me` arrives */
  for (int r = 0; r < p; ++r)
    for (int i = 0; i < n; ++i) CHECK(g[r * n + i] == value(me, me * n + i), "device alltoall n=%d r=%d", n, r);
  /* reduce-scatter block in place: the result at the front, the rest as it was */
  for (size_t i = 0; i < all; ++i) h[i] = (int)value(me, (int)i);
  CUDA_OK(cudaMemcpy(d, h, sizeof(int) * all, cudaMemcpyHostToDevice));
  MPI_Reduce_scatter_block(MPI_IN_PLACE, d, n, MPI_INT, MPI_SUM, comm);
  hostCopy(g, d, all);
  for (int i = 0; i < n; ++i) {
    long long want = 0;
    for (int r = 0; r < p; ++r) want += value(r, me * n + i);
    CHECK(g[i] == want, "device reduce_scatter_block in place n=%d i=%d", n, i);
  }
  for (size_t i = (size_t)n; i < all; ++i) CHECK(g[i] == h[i], "device reduce_scatter_block in place: input %zu changed", i);
  /* gather to rank 0, scatter from rank 0 */
  for (int i = 0; i < n; ++i) h[i] = me * 1000 + i;
  CUDA_OK(cudaMemcpy(e, h, sizeof(int) * (size_t)n, cudaMemcpyHostToDevice));
  MPI_Gather(e, n, MPI_INT, d, n, MPI_INT, 0, comm);
  if (me == 0) {
    hostCopy(g, d, all);
    for (int r = 0; r < p; ++r)
      for (int i = 0; i < n; ++i) CHECK(g[r * n + i] == r * 1000 + i, "device gather n=%d r=%d", n, r);
  }
  MPI_Scatter(d, n, MPI_INT, e, n, MPI_INT, 0, comm);
  hostCopy(g, e, (size_t)n);
  for (int i = 0; i < n; ++i) CHECK(g[i] == me * 1000 + i, "device scatter n=%d i=%d", n, i);
  cudaFree(d);
  cudaFree(e);
  /* Managed memory is device memory to the face as to Strata: an in-place reduce-scatter (its
   * result through the face's scratch) and a bcast into a strided type (packed), read by the host. */
  if (n > 0) {
    int* m = NULL;
    CUDA_OK(cudaMallocManaged((void**)&m, sizeof(int) * room, cudaMemAttachGlobal));
    for (size_t i = 0; i < all; ++i) m[i] = (int)value(me, (int)i);
    MPI_Reduce_scatter_block(MPI_IN_PLACE, m, n, MPI_INT, MPI_SUM, comm);
    for (int i = 0; i < n; ++i) {
      long long want = 0;
      for (int r = 0; r < p; ++r) want += value(r, me * n + i);
      CHECK(m[i] == want, "managed reduce_scatter_block in place n=%d i=%d", n, i);
    }
    for (size_t i = (size_t)n; i < all; ++i) CHECK(m[i] == (int)value(me, (int)i), "managed reduce_scatter_block: input %zu changed", i);
    MPI_Datatype strided;
    MPI_Type_vector(n, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    for (int i = 0; i < 2 * n; ++i) m[i] = me == root ? (int)value(root, i) : -1;
    MPI_Bcast(m, 1, strided, root, comm);
    MPI_Type_free(&strided);
    for (int i = 0; i < n; ++i) {
      CHECK(m[2 * i] == value(root, 2 * i) && m[2 * i + 1] == (me == root ? (int)value(root, 2 * i + 1) : -1),
            "managed strided bcast n=%d i=%d", n, i);
    }
    cudaFree(m);
  }
  free(h);
  free(g);
}

/* A rank whose device is full cannot stage its strided blocks: it takes no part in the allgather and
 * aborts the communicator, so its peers' part fails at once, naming the abort (waiting for it they
 * would time out only at Strata's bound), and every later call on the communicator fails on every
 * rank. Where the device's memory is small enough to fill: the simulator's CUDA_SIM_DEVICE_MEMORY. */
static void deviceStagingRunsOut(MPI_Comm parent) {
  int p, me;
  MPI_Comm_size(parent, &p);
  MPI_Comm_rank(parent, &me);
  if (!strataServesWithPeers(p) || getenv("CUDA_SIM_DEVICE_MEMORY") == NULL) return;
  MPI_Comm comm;
  MPI_Comm_dup(parent, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  const int n = 64, victim = p - 1;
  MPI_Datatype vec, strided;  /* n ints, every other one; one element per rank, 2n ints apart */
  MPI_Type_vector(n, 1, 2, MPI_INT, &vec);
  MPI_Type_create_resized(vec, 0, (MPI_Aint)(2 * n * sizeof(int)), &strided);
  MPI_Type_commit(&strided);
  int* h = malloc(sizeof(int) * 2 * (size_t)n * (size_t)p);
  for (int i = 0; i < n; ++i) h[i] = (int)value(me, i);
  int* send = deviceCopy(h, (size_t)n);
  int* recv = NULL;
  CUDA_OK(cudaMalloc((void**)&recv, sizeof(int) * 2 * (size_t)n * (size_t)p));
  /* First with room: the communicator and its device resources exist before the device fills. */
  CHECK(MPI_Allgather(send, n, MPI_INT, recv, 1, strided, comm) == MPI_SUCCESS, "strided device allgather");
  hostCopy(h, recv, 2 * (size_t)n * (size_t)p);
  for (int r = 0; r < p; ++r) {
    for (int i = 0; i < n; ++i) CHECK(h[2 * n * r + 2 * i] == value(r, i), "strided device allgather r=%d i=%d", r, i);
  }
  void* filler = NULL;
  if (me == victim) {
    size_t freeBytes = 0, total = 0;
    CUDA_OK(cudaMemGetInfo(&freeBytes, &total));
    CUDA_OK(cudaMalloc(&filler, freeBytes));
  }
  const int rc = MPI_Allgather(send, n, MPI_INT, recv, 1, strided, comm);
  int cls = MPI_SUCCESS, len = 0;
  char text[MPI_MAX_ERROR_STRING] = "";
  if (rc != MPI_SUCCESS) {
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, text, &len);
  }
  if (me == victim) {
    CHECK(cls == MPI_ERR_NO_MEM && strstr(text, "cudaMalloc") != NULL && strstr(text, "aborted") != NULL,
          "the rank whose device is full: code %d of class %d, '%s'", rc, cls, text);
    CUDA_OK(cudaFree(filler));
  } else {
    /* Strata's error for a peer's notice (the rest, which names the abort, may pass MPI_MAX_ERROR_STRING) */
    CHECK(cls == MPI_ERR_OTHER && strstr(text, "remote process") != NULL && strstr(text, "timed out") == NULL,
          "a peer of the rank whose device is full: code %d of class %d, '%s'", rc, cls, text);
  }
  CHECK(MPI_Barrier(comm) != MPI_SUCCESS, "a barrier on the communicator after the abort succeeded");
  cudaFree(send);
  cudaFree(recv);
  free(h);
  MPI_Type_free(&strided);
  MPI_Type_free(&vec);
  MPI_Comm_free(&comm);
}
#endif

/* An argument only one rank gets wrong (a negative count, then a root out of range): that rank's
 * call goes to MPI, which reports it (MPI_ERR_COUNT, MPI_ERR_ROOT), after the face refused it in
 * Strata, so its peers' part fails at once, naming the rank (waiting for it they would time out only
 * at Strata's bound, 300 s by default), and every later call on the communicator fails. */
static void oneRanksArgumentErrorEndsItsPeersCall(MPI_Comm parent) {
  int p, me;
  MPI_Comm_size(parent, &p);
  MPI_Comm_rank(parent, &me);
  if (!strataServesWithPeers(p)) return;
  const int victim = p - 1;
  for (int kind = 0; kind < 2; ++kind) {
    MPI_Comm comm;
    MPI_Comm_dup(parent, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int in[4] = {1, 2, 3, 4}, out[4] = {0, 0, 0, 0};
    CHECK(MPI_Allreduce(in, out, 4, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS && out[3] == 4 * p, "warm-up allreduce");
    MPI_Barrier(parent); /* every rank out of the warm-up */
    const double start = MPI_Wtime();
    const int rc = kind == 0 ? MPI_Allreduce(in, out, me == victim ? -1 : 4, MPI_INT, MPI_SUM, comm)
                             : MPI_Bcast(in, 4, MPI_INT, me == victim ? p : 0, comm);
    const double seconds = MPI_Wtime() - start;
    int cls = MPI_SUCCESS, len = 0;
    char text[MPI_MAX_ERROR_STRING] = "";
    if (rc != MPI_SUCCESS) {
      MPI_Error_class(rc, &cls);
      MPI_Error_string(rc, text, &len);
    }
    const char* what = kind == 0 ? "allreduce with a negative count" : "bcast with a root out of range";
    if (kind == 1 && me == 0 && rc == MPI_SUCCESS) {
      /* The broadcast's root, whose part does not need the rank that refused, may finish the call:
       * its next call fails (below). */
    } else if (me == victim) {
      CHECK(cls == (kind == 0 ? MPI_ERR_COUNT : MPI_ERR_ROOT), "the %s on its rank: code %d of class %d, '%s'", what, rc, cls,
            text);
    } else {
      char named[64];
      snprintf(named, sizeof named, "rank %d refused call", victim);
      CHECK(cls == MPI_ERR_OTHER && strstr(text, named) != NULL, "a peer of the %s: code %d of class %d, '%s'", what, rc,
            cls, text);
    }
    CHECK(seconds < 20, "the %s took %.1f s: its end must not wait for Strata's bound", what, seconds);
    CHECK(MPI_Barrier(comm) != MPI_SUCCESS, "a barrier after the %s succeeded", what);
    MPI_Comm_free(&comm);
  }
}

/* A collective in an MPI_COMM_SELF attribute's delete callback, set before any collective: MPI_Finalize
 * deletes it after the face has destroyed its communicators, and the collective must still be right. */
static int finalizeCollectiveOk = 0;
static int collectiveAtFinalize(MPI_Comm self, int key, void* value, void* extra) {
  (void)self, (void)key, (void)value, (void)extra;
  int p = 0, one = 1, sum = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  finalizeCollectiveOk = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS && sum == p;
  return MPI_SUCCESS;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  int atFinalize = MPI_KEYVAL_INVALID;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, collectiveAtFinalize, &atFinalize, NULL);
  MPI_Comm_set_attr(MPI_COMM_SELF, atFinalize, NULL);
#ifdef FACE_TEST_DEVICE
  int devices = 1;
  cudaGetDeviceCount(&devices);
  cudaSetDevice(worldRank % (devices > 0 ? devices : 1));
#endif
  int p = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const int counts[] = {0, 1, 2, 7, 13, 1000, 65536 + 3};
  MPI_Comm dup, split;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_split(MPI_COMM_WORLD, worldRank % 2, p - worldRank, &split);  /* reversed order inside */
  MPI_Comm comms[] = {MPI_COMM_WORLD, dup, split};
  for (int c = 0; c < 3; ++c) {
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; ++k) {
      reductions(comms[c], counts[k]);
      movement(comms[c], counts[k]);
    }
    passedThrough(comms[c]);
    mixedLayouts(comms[c]);
    rootOutOfRange(comms[c]);
    vArraysMpiReports(comms[c]);
    inPlaceWhereMpiForbidsIt(comms[c]);
#ifdef FACE_TEST_DEVICE
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; ++k) deviceBuffers(comms[c], counts[k]);
#endif
  }
  MPI_Comm_free(&split);
  MPI_Comm_free(&dup);
  /* On a duplicate of MPI_COMM_WORLD, whose size the node shapes under test fit (a split's may not:
   * its calls then go to MPI, which must not get the erroneous ones). */
  strataErrorsReachTheHandler(MPI_COMM_WORLD);
  oneRanksArgumentErrorEndsItsPeersCall(MPI_COMM_WORLD);
#ifdef FACE_TEST_DEVICE
  deviceStagingRunsOut(MPI_COMM_WORLD);
#endif
  /* A communicator created and freed again and again: nothing leaks, each gets its own. */
  for (int i = 0; i < 20; ++i) {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c);
    CHECK(sum == p, "allreduce on a fresh duplicate");
    MPI_Comm_free(&c);
  }
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (worldRank == 0) printf("face_test: %d ranks, %d failed checks\n", p, all);
  MPI_Finalize();
  if (!finalizeCollectiveOk) fprintf(stderr, "[rank %d] the allreduce at MPI_Finalize failed\n", worldRank);
  return all == 0 && finalizeCollectiveOk ? 0 : 1;
}
