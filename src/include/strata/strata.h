/*
 * Strata: GPU-aware hierarchical collective operations.
 *
 * The C API mirrors NCCL 2.x: same argument order, same enum values, stream-ordered calls.
 * Switching between the two is a rename. `stream` may be 0 for host buffers, in which case
 * the call completes before it returns.
 *
 * This header compiles without the CUDA toolkit: `cudaStream_t` is then an opaque pointer
 * type identical to CUDA's own definition, so the two headers may be included in any order.
 */
#ifndef STRATA_STRATA_H_
#define STRATA_STRATA_H_

#include <stddef.h>
/* Only MPI's C API is used; its C++ bindings (removed in MPI 3) would need an extra library. */
#if defined(__cplusplus) && !defined(OMPI_SKIP_MPICXX)
#define OMPI_SKIP_MPICXX 1
#endif
#if defined(__cplusplus) && !defined(MPICH_SKIP_MPICXX)
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#ifndef __DRIVER_TYPES_H__
/* Same definition as the CUDA runtime's driver_types.h; a repeated identical typedef is valid C11 and C++. */
struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;
#endif

#include <strata/version.h> /* STRATA_MAJOR, STRATA_MINOR, STRATA_PATCH, STRATA_VERSION_CODE */

/* The enums are ints in C; in C++ they say so (a fixed underlying type), so that a value outside
 * the enumerators, which the library rejects with strataInvalidArgument, is still a valid value of
 * the type and not undefined behaviour. The same ABI either way. */
#ifdef __cplusplus
#define STRATA_ENUM_INT : int
#else
#define STRATA_ENUM_INT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility; the API below is what it exports. */
#if defined(__GNUC__) && !defined(__CUDACC_RTC__)
#pragma GCC visibility push(default)
#endif

typedef struct strataComm* strataComm_t;

typedef enum STRATA_ENUM_INT {
  strataSuccess = 0,
  strataUnhandledCudaError = 1,
  strataSystemError = 2,
  strataInternalError = 3,
  strataInvalidArgument = 4,
  strataInvalidUsage = 5,
  strataRemoteError = 6,
  strataInProgress = 7,
  strataTimeout = 8
} strataResult_t;

typedef enum STRATA_ENUM_INT {
  strataInt8 = 0,
  strataChar = 0,
  strataUint8 = 1,
  strataInt32 = 2,
  strataInt = 2,
  strataUint32 = 3,
  strataInt64 = 4,
  strataUint64 = 5,
  strataFloat16 = 6,
  strataHalf = 6,
  strataFloat32 = 7,
  strataFloat = 7,
  strataFloat64 = 8,
  strataDouble = 8,
  strataBfloat16 = 9,
  strataNumTypes = 10
} strataDataType_t;

typedef enum STRATA_ENUM_INT {
  strataSum = 0,
  strataProd = 1,
  strataMax = 2,
  strataMin = 3,
  strataAvg = 4,
  strataNumOps = 5
} strataRedOp_t;

typedef struct {
  int ranksPerNode;      /* 0: discover nodes; k > 0: virtual nodes of k consecutive ranks */
  int cudaAwareMpi;      /* -1: ask MPI; 0: stage through host; 1: pass device pointers */
  double timeoutSeconds; /* bound on every wait; 0: default */
  const char* algorithm; /* NULL: tuner; else a name, as STRATA_ALGO */
  int mpiNative;         /* 1: the MPI library's own collective ("native") is a candidate of the tuner
                            (host buffers); 0: as STRATA_MPI_NATIVE (default off; the MPI face turns it on) */
} strataConfig_t;
#define STRATA_CONFIG_INITIALIZER { 0, -1, 0.0, NULL, 0 }

/* Communicator. strataCommInitMpi is collective over mpiComm; the MPI communicator is duplicated,
 * so the caller may free it afterwards; it succeeds on every rank or on none. strataCommDestroy is
 * collective and waits for pending work; strataCommAbort is local, may be called from any thread
 * (also while another thread's call or strataCommDestroy waits on comm), ends pending work with
 * an error, and tells the peers without waiting for them (small messages, from a thread that may
 * enter MPI: any under MPI_THREAD_MULTIPLE, else the main one), whose calls waiting for this rank,
 * or their next, then end with strataRemoteError; their strataCommDestroy does not wait for it
 * (the node's peers see it leave at once through their shared memory). One teardown frees comm: a
 * call that finds it being torn down is refused (an abort then returns success: it is going). One
 * collective at a time per communicator. */
strataResult_t strataCommInitMpi(strataComm_t* comm, MPI_Comm mpiComm, const strataConfig_t* config /* NULL: defaults */);
strataResult_t strataCommDestroy(strataComm_t comm);
strataResult_t strataCommAbort(strataComm_t comm);
/* This rank will not make the collective its peers make now on comm, for a reason of its own (an
 * argument only it got wrong: the MPI face's calls that go to MPI for it to report). It counts as
 * that collective: made in its place in the order of comm's calls, it is numbered and refused as a
 * collective whose arguments Strata refused on this rank, so the peers' part of it fails at once
 * with strataRemoteError naming this rank and `reason` (cut to about 200 bytes), instead of
 * waiting for it until the bound, and comm then fails on every rank, as after any refused call;
 * where every rank refuses the same call (the same wrong argument everywhere), comm stays usable.
 * Like any call after a refusal, it first waits (bounded) until every peer has answered this rank's
 * previous refusal. Peers that wait in the MPI library's own collective (the tuner's "native")
 * do not hear it. Returns strataSuccess once the call is refused (strataGetLastError(comm) then
 * says "refused by the caller: reason"), or the error that kept it from being made (comm NULL,
 * aborted or unusable). */
strataResult_t strataCommRefuseCall(strataComm_t comm, const char* reason);
strataResult_t strataCommCount(strataComm_t comm, int* count);
strataResult_t strataCommUserRank(strataComm_t comm, int* rank);
const char* strataGetErrorString(strataResult_t result);
/* The last error on comm (what, where); for a NULL or destroyed comm, the calling thread's last error.
 * Where the host had no memory left to build a failure's message, it is "no host memory" (the call
 * keeps its failure's code: strataSystemError where the memory ran out in the call itself), and a
 * rank that could not tell its peers of a call it failed fails comm (its next call fails). */
const char* strataGetLastError(strataComm_t comm);
/* An error that arose outside a call, as NCCL's ncclCommGetAsyncError: *asyncError is strataSuccess
 * while comm is usable and none of its device work has failed; else the code of what failed: a
 * device collective queued for the progress thread, a single-kernel peer collective that stopped
 * (a node member refused the call, failed or aborted) or timed out, a stream's wait for a queued call
 * that timed out on the device, the earlier error that left comm unusable, or (strataInvalidUsage)
 * an abort under way, or (strataRemoteError) a peer's notice that its communicator failed or was
 * aborted, or that it refused a call this rank made. strataGetLastError(comm) then says what;
 * comm's next call fails too. It neither waits nor sends: any thread may call it at any time, also
 * while another thread's call waits on comm (a watchdog that calls strataCommAbort when it sees an
 * error). The peers' notices are read here (a nonblocking test, at most every 200 us while none
 * came) only from a thread that may enter MPI beside another thread's call: any under
 * MPI_THREAD_MULTIPLE, the main one under MPI_THREAD_SINGLE or MPI_THREAD_FUNNELED, none under
 * MPI_THREAD_SERIALIZED; elsewhere this rank hears them in its own waits (its queued work, its next
 * call). Once a teardown has claimed comm it returns strataInvalidArgument ("not a live
 * communicator"), as every call does: stop polling then. */
strataResult_t strataCommGetAsyncError(strataComm_t comm, strataResult_t* asyncError);
/* The algorithm comm's last collective ran ("ring", "leader", "native", ...; "" before the first);
 * the string stays valid until comm's next collective or its destruction. */
const char* strataCommLastAlgorithm(strataComm_t comm);

/* Collectives. In-place as NCCL: sendbuff == recvbuff, and for allgather/gather/reduce-scatter/scatter
 * the rank's own slice of the larger buffer. Blocks are laid out in rank order. */
strataResult_t strataAllReduce(const void* sendbuff, void* recvbuff, size_t count, strataDataType_t datatype,
                               strataRedOp_t op, strataComm_t comm, cudaStream_t stream);
strataResult_t strataBroadcast(const void* sendbuff, void* recvbuff, size_t count, strataDataType_t datatype,
                               int root, strataComm_t comm, cudaStream_t stream);
strataResult_t strataReduce(const void* sendbuff, void* recvbuff, size_t count, strataDataType_t datatype,
                            strataRedOp_t op, int root, strataComm_t comm, cudaStream_t stream);
strataResult_t strataAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, strataDataType_t datatype,
                               strataComm_t comm, cudaStream_t stream);
strataResult_t strataReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, strataDataType_t datatype,
                                   strataRedOp_t op, strataComm_t comm, cudaStream_t stream);
strataResult_t strataGather(const void* sendbuff, void* recvbuff, size_t sendcount, strataDataType_t datatype,
                            int root, strataComm_t comm, cudaStream_t stream);
strataResult_t strataScatter(const void* sendbuff, void* recvbuff, size_t recvcount, strataDataType_t datatype,
                             int root, strataComm_t comm, cudaStream_t stream);
strataResult_t strataAlltoAll(const void* sendbuff, void* recvbuff, size_t count /* per peer */,
                              strataDataType_t datatype, strataComm_t comm, cudaStream_t stream);
strataResult_t strataScan(const void* sendbuff, void* recvbuff, size_t count, strataDataType_t datatype,
                          strataRedOp_t op, strataComm_t comm, cudaStream_t stream); /* inclusive */
strataResult_t strataExscan(const void* sendbuff, void* recvbuff, size_t count, strataDataType_t datatype,
                            strataRedOp_t op, strataComm_t comm, cudaStream_t stream); /* rank 0's recvbuff untouched */
strataResult_t strataShift(const void* sendbuff, void* recvbuff, size_t count, strataDataType_t datatype,
                           int shift /* rank r sends to (r + shift) mod p */, strataComm_t comm, cudaStream_t stream);
strataResult_t strataBarrier(strataComm_t comm, cudaStream_t stream);

/* Irregular (v) variants, as MPI's: counts and displacements in elements, one per rank, blocks in
 * rank order at the given displacements. In place: the rank's own block of the larger buffer, as
 * for the regular collectives (alltoallv: sendbuff == recvbuff, with recvcounts/rdispls describing
 * both sides). */
strataResult_t strataAllGatherv(const void* sendbuff, size_t sendcount, void* recvbuff, const size_t* recvcounts,
                                const size_t* displs, strataDataType_t datatype, strataComm_t comm,
                                cudaStream_t stream);
/* recvcounts and displs are significant at the root only (they may be NULL elsewhere). */
strataResult_t strataGatherv(const void* sendbuff, size_t sendcount, void* recvbuff, const size_t* recvcounts,
                             const size_t* displs, strataDataType_t datatype, int root, strataComm_t comm,
                             cudaStream_t stream);
/* sendcounts and displs are significant at the root only. */
strataResult_t strataScatterv(const void* sendbuff, const size_t* sendcounts, const size_t* displs, void* recvbuff,
                              size_t recvcount, strataDataType_t datatype, int root, strataComm_t comm,
                              cudaStream_t stream);
strataResult_t strataAlltoAllv(const void* sendbuff, const size_t* sendcounts, const size_t* sdispls, void* recvbuff,
                               const size_t* recvcounts, const size_t* rdispls, strataDataType_t datatype,
                               strataComm_t comm, cudaStream_t stream);
/* Block i of sendbuff (recvcounts[i] elements, blocks back to back) is reduced into rank i's recvbuff. */
strataResult_t strataReduceScatterv(const void* sendbuff, void* recvbuff, const size_t* recvcounts,
                                    strataDataType_t datatype, strataRedOp_t op, strataComm_t comm,
                                    cudaStream_t stream);

#if defined(__GNUC__) && !defined(__CUDACC_RTC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STRATA_STRATA_H_ */
