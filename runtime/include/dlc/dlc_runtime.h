/*===- dlc/dlc_runtime.h - The dlc runtime library (libdlcrt) C API -------===*
 *
 * The C API of libdlcrt, the runtime of models compiled ahead of time by dlc.
 * A compiled model object defines one constant `dlc_model_desc` (see
 * docs/runtime-abi.md); this library turns it into a usable model: it picks
 * the device, lays out and initialises the parameters, loads and saves them
 * as .safetensors, and calls the generated entry points.
 *
 * Conventions:
 *  - Every function that can fail either returns a `dlc_status` or documents
 *    its failure value; on failure it sets a thread-local message that
 *    `dlc_last_error()` returns, and on success it clears it (so the message
 *    always describes the last call made on this thread). The pure lookups
 *    `dlc_last_error`, `dlc_status_name`, `dlc_device_name`, `dlc_dtype_name`
 *    and `dlc_dtype_size` leave the message alone.
 *  - No function throws, aborts or exits; out-of-memory is reported as
 *    DLC_ERR_OUT_OF_MEMORY.
 *  - Pointers returned (names, data) stay valid until the object they belong
 *    to is destroyed.
 *  - A model may run entries from several threads at once; loading, saving
 *    or initialising it while it runs is the caller's responsibility to avoid.
 *
 * Tensor files (.npy, .safetensors) are handled by dlc/dlc_io.h.
 *
 *===----------------------------------------------------------------------===*/

#ifndef DLC_DLC_RUNTIME_H
#define DLC_DLC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define DLC_API
#elif defined(__GNUC__)
#define DLC_API __attribute__((visibility("default")))
#else
#define DLC_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*===-- The ABI between a compiled model and the runtime ------------------===*/

/* The version of the descriptor layout below; a compiled model stores it in
 * `dlc_model_desc::abi_version`. Version 2 added `param_data`, version 3
 * `cuda`, version 4 `cpu_name` and the CPU variants; the runtime also
 * accepts version 1 to 3 objects (which lack the later fields) and rejects
 * any other value. */
#define DLC_ABI_VERSION 4

/* An entry point of a compiled model. `args` holds one data pointer per
 * tensor: every param (in `param` order), then every input, then every
 * output of the entry, then the workspace; a CUDA entry gets one more
 * pointer, the runtime's CUDA context (see dlc/dlc_cuda_abi.h). */
typedef void (*dlc_entry_fn)(void *const *args);

/* The CUDA code of a compiled model (docs/runtime-abi.md): PTX text for all
 * of its kernels and one host function per entry that launches them through
 * dlc/dlc_cuda_abi.h. */
typedef struct dlc_cuda_module {
  const char *ptx;                 /* NUL-terminated PTX of every kernel;
                                      empty (not loaded) without kernels */
  int32_t num_kernels;             /* entries of kernel_names */
  const char *const *kernel_names; /* kernel k: its .entry name in the PTX */
  const dlc_entry_fn *entries;     /* one per `entry` block, in order */
} dlc_cuda_module;

/* A further compilation of a model's CPU entries, for a CPU with more
 * instructions (dlc --cpu=portable): the runtime calls these entries
 * instead of `dlc_model_desc::entries` when the CPU has every feature. */
typedef struct dlc_cpu_variant {
  const char *name;            /* e.g. "x86-64-v4" */
  const char *features;        /* the x86 features it needs, by LLVM's
                                  names, comma-separated (as the `cpu`
                                  line of the description) */
  const dlc_entry_fn *entries; /* one per `entry` block, in order */
} dlc_cpu_variant;

/* The one constant a compiled model object defines, as
 * `const dlc_model_desc dlc_model_<NAME>;`. */
typedef struct dlc_model_desc {
  uint32_t abi_version;        /* DLC_ABI_VERSION (4) */
  const char *text;            /* the model description, NUL-terminated */
  int32_t num_entries;         /* number of `entry` blocks in `text` */
  const dlc_entry_fn *entries; /* one per `entry` block, in order (CPU) */
  /* Version 2: one pointer per `param`/`state` line, in order: the initial
   * value (the tensor's bytes) of a param whose init is `data`, else NULL. */
  const void *const *param_data;
  /* Version 3: the model's CUDA code; NULL when it has none. */
  const dlc_cuda_module *cuda;
  /* Version 4: the CPU `entries` were compiled for (an LLVM CPU name, e.g.
   * "x86-64-v3" or "znver4"), and further variants of them, best first;
   * the runtime runs the first variant whose features the CPU has, else
   * `entries` (whose features the `cpu` line names). */
  const char *cpu_name;
  int32_t num_cpu_variants;
  const dlc_cpu_variant *cpu_variants;
} dlc_model_desc;

/*===-- Status, devices, dtypes -------------------------------------------===*/

typedef enum {
  DLC_OK = 0,
  DLC_ERR_INVALID_ARGUMENT = 1,   /* bad pointer, index, enum or env value */
  DLC_ERR_IO = 2,                 /* a file could not be read or written */
  DLC_ERR_FORMAT = 3,             /* malformed or mismatching data */
  DLC_ERR_OUT_OF_MEMORY = 4,      /* an allocation failed */
  DLC_ERR_DEVICE_UNAVAILABLE = 5, /* the requested device cannot be used */
  DLC_ERR_INTERNAL = 6,           /* a bug in the runtime */
  DLC_ERR_COMMUNICATION = 7       /* a collective failed or timed out: a
                                     rank of the job died or hangs */
} dlc_status;

typedef enum {
  DLC_DEVICE_AUTO = 0,
  DLC_DEVICE_CPU = 1,
  DLC_DEVICE_CUDA = 2
} dlc_device_kind;

typedef enum {
  DLC_F32 = 0,
  DLC_F16 = 1,
  DLC_BF16 = 2,
  DLC_F64 = 3,
  DLC_I64 = 4,
  DLC_I32 = 5,
  DLC_I8 = 6,
  DLC_U8 = 7
} dlc_dtype;

/* The maximum rank of a tensor. */
#define DLC_MAX_RANK 8

/* A description of a tensor: a model param, an entry's input or output, or a
 * tensor of a dlc_tensor_list (dlc/dlc_io.h). Dense and row-major. */
typedef struct dlc_tensor_info {
  const char *name;
  dlc_dtype dtype;
  int32_t rank;                /* 0 for a scalar */
  int64_t shape[DLC_MAX_RANK]; /* shape[rank..7] are 0 */
  int64_t numel;               /* product of the shape (1 for a scalar) */
  int64_t nbytes;              /* numel * dlc_dtype_size(dtype) */
  void *data;                  /* NULL where there is no storage */
} dlc_tensor_info;

/* The message of the last failure on this thread; "" when the last call
 * succeeded. Valid until the next runtime call on this thread. */
DLC_API const char *dlc_last_error(void);

/* "DLC_OK", "DLC_ERR_INVALID_ARGUMENT", ...; "DLC_ERR_UNKNOWN" otherwise. */
DLC_API const char *dlc_status_name(dlc_status status);

/* "auto", "cpu", "cuda"; "unknown" otherwise. */
DLC_API const char *dlc_device_name(dlc_device_kind device);

/* "f32", "f16", "bf16", "f64", "i64", "i32", "i8", "u8" (the spelling of the
 * model description); "unknown" otherwise. */
DLC_API const char *dlc_dtype_name(dlc_dtype dtype);

/* The size of one element in bytes; 0 for an invalid dtype. */
DLC_API size_t dlc_dtype_size(dlc_dtype dtype);

/*===-- Devices and threads -----------------------------------------------===*/

/* Resolves a device request to the device that would serve it.
 *  - DLC_DEVICE_CPU: the CPU.
 *  - DLC_DEVICE_CUDA: CUDA if usable, else DLC_ERR_DEVICE_UNAVAILABLE with
 *    the reason.
 *  - DLC_DEVICE_AUTO: the environment variable DLC_DEVICE decides
 *    (auto|cpu|cuda|cuda:N, case-insensitive; unset or empty means auto; any
 *    other value is DLC_ERR_INVALID_ARGUMENT); `cpu` and `cuda` behave as
 *    above, `cuda:N` asks for CUDA device N (DLC_ERR_DEVICE_UNAVAILABLE
 *    naming the device count when there is no such device), `auto` picks
 *    CUDA when usable and the CPU otherwise.
 * CUDA is usable when libcuda.so.1 can be dlopen'ed and provides every
 * driver function the runtime uses (through cuGetProcAddress_v2), cuInit(0)
 * succeeds and cuDeviceGetCount reports at least one device (probed once per
 * process). This only reports what the machine offers: a model also needs
 * code for the device, see dlc_model_create. */
DLC_API dlc_status dlc_select_device(dlc_device_kind requested,
                                     dlc_device_kind *selected);

/* 1 when CUDA is usable (see dlc_select_device), else 0 and, when
 * `reason_buf` is not NULL, the reason as a NUL-terminated string truncated
 * to `reason_len` bytes ("" when usable). Does not touch dlc_last_error. */
DLC_API int dlc_cuda_available(char *reason_buf, size_t reason_len);

/* The number of threads the runtime uses: the environment variable
 * DLC_NUM_THREADS when it is a decimal integer in [1, 1024] (read at each
 * call), else the number of online cores. */
DLC_API int dlc_num_threads(void);

/* Calls fn(ctx, begin, end) over disjoint, contiguous chunks that cover
 * [0, n) exactly once, on a persistent pool of dlc_num_threads() threads
 * counting the caller (created at the first call, sized by DLC_NUM_THREADS at
 * that time; up to 4 chunks per thread, claimed dynamically), and returns
 * when all chunks are done. Runs fn(ctx, 0, n) in the calling thread when
 * n == 1, when the pool has one thread, when called from inside a chunk
 * (nesting), or when another thread is using the pool. Does nothing when
 * n <= 0 or fn is NULL. `fn` must not throw (a C++ exception is swallowed).
 * Does not touch dlc_last_error. */
DLC_API void dlc_parallel_for(int64_t n,
                              void (*fn)(void *ctx, int64_t begin, int64_t end),
                              void *ctx);

/* Scratch memory of generated code (the intermediate tensors of an entry
 * call): like aligned_alloc/malloc/free, but freed blocks are kept, by size,
 * for the next call of the same shapes instead of going back to the system
 * (which would cost page faults on every call). Cached blocks are bounded to
 * half of the physical memory; beyond that, blocks are returned. Thread-safe.
 * `alignment` is a power of two; the result is aligned to at least 64 bytes;
 * NULL when out of memory. Generated code calls these; programs need not. */
DLC_API void *dlc_workspace_aligned_alloc(uint64_t alignment, uint64_t size);
DLC_API void *dlc_workspace_alloc(uint64_t size);
DLC_API void dlc_workspace_free(void *ptr);
/* Bytes handed out by dlc_workspace_*alloc and not freed yet, and the most
 * there ever were (either pointer may be NULL). */
DLC_API void dlc_workspace_usage(int64_t *current, int64_t *peak);

/*===-- Models ------------------------------------------------------------===*/

typedef struct dlc_model dlc_model;

/* Creates a model from a compiled model's descriptor: validates the ABI
 * version, parses and validates `desc->text` (DLC_ERR_FORMAT naming the line
 * of the first error), checks the entry table, and allocates the param arena
 * (zero-filled, except params whose init is `data`, which get their
 * embedded values: call dlc_model_init or dlc_model_load next). `device` is
 * resolved as by dlc_select_device, except that the model must also have code
 * for the device (`desc->cuda`): CUDA without it fails with
 * DLC_ERR_DEVICE_UNAVAILABLE, and AUTO picks CUDA only when the model has
 * CUDA code and CUDA is usable (unless DLC_DEVICE decides). When AUTO picked
 * CUDA and setting the model up there fails with DLC_ERR_DEVICE_UNAVAILABLE
 * (the driver refuses the PTX, no cuBLASLt, no algorithm for a GEMM, the
 * device is taken), the model runs on the CPU instead, and
 * dlc_model_fallback_reason says why; an explicit CUDA request fails. On CUDA
 * the model uses device 0 (or the N of DLC_DEVICE=cuda:N), its primary context,
 * one stream, and one device allocation for params, workspace, input/output
 * staging and the cuBLASLt workspace; DLC_ERR_OUT_OF_MEMORY, with the plan's
 * numbers, when the device has too little free memory. It also plans every
 * GEMM of the model's entries (cuBLASLt's heuristic, once per GEMM):
 * DLC_ERR_DEVICE_UNAVAILABLE without cuBLASLt or an algorithm for one,
 * DLC_ERR_INTERNAL for a call the runtime rejects (a compiler bug).
 * `*out` is set to NULL on failure. */
DLC_API dlc_status dlc_model_create(const dlc_model_desc *desc,
                                    dlc_device_kind device, dlc_model **out);

/* dlc_model_create on a given CUDA device: `ordinal` -1 means as
 * dlc_model_create (device 0, or N of DLC_DEVICE=cuda:N); `ordinal` >= 0 is
 * the CUDA device to use when the model runs on CUDA (it overrides the N of
 * DLC_DEVICE, and is ignored when the model runs on the CPU). Anything below
 * -1 is DLC_ERR_INVALID_ARGUMENT; an ordinal >= the number of devices is
 * DLC_ERR_DEVICE_UNAVAILABLE. */
DLC_API dlc_status dlc_model_create_on(const dlc_model_desc *desc,
                                       dlc_device_kind device, int32_t ordinal,
                                       dlc_model **out);

/* Frees the model and its params. NULL is ignored. */
DLC_API void dlc_model_destroy(dlc_model *m);

/* The device the model runs on (never AUTO); DLC_DEVICE_AUTO for NULL. */
DLC_API dlc_device_kind dlc_model_device(const dlc_model *m);

/* A human-readable description of the device the model runs on: "cpu", or
 * "cuda:N (DEVICE NAME)", e.g. "cuda:0 (NVIDIA H200)"; NULL for NULL. */
DLC_API const char *dlc_model_device_name(const dlc_model *m);

/* The compilation of the CPU entries the model runs: the variant the
 * runtime picked for this CPU (e.g. "x86-64-v4"; docs/runtime-abi.md), or
 * the CPU the object was compiled for; "" for an object older than ABI
 * version 4; NULL for NULL. DLC_CPU_FEATURES_DISABLE=avx512f,... hides
 * features from the runtime's view of the CPU. */
DLC_API const char *dlc_model_cpu_name(const dlc_model *m);

/* Why a model created with AUTO runs on the CPU although it has CUDA code:
 * CUDA is unavailable ("CUDA device unavailable: libcuda.so.1 not found"),
 * or the model's CUDA setup failed (the message that DLC_DEVICE=cuda would
 * have given). "" when the model runs on CUDA, was asked for the CPU
 * (DLC_DEVICE_CPU or DLC_DEVICE=cpu) or has no CUDA code; NULL for NULL.
 * The lesson's `using device: ...` line with the reason:
 *   printf("device: %s%s%s\n", dlc_model_device_name(m),
 *          *dlc_model_fallback_reason(m) ? ", CUDA not used: " : "",
 *          dlc_model_fallback_reason(m)); */
DLC_API const char *dlc_model_fallback_reason(const dlc_model *m);

/* The model's name (the `name` line); NULL for NULL. */
DLC_API const char *dlc_model_name(const dlc_model *m);

/* Sets every param from its init rule (uniform, zeros, ones) with the
 * deterministic stream of docs/runtime-abi.md seeded by `seed`; a `data`
 * param gets the value embedded in the object (the seed does not matter). */
DLC_API dlc_status dlc_model_init(dlc_model *m, uint64_t seed);

/* Loads the params from a .safetensors file. Every param must be present
 * with exactly its dtype and shape; other tensors are ignored. The file is
 * fully validated before any param is written, so on any error the params
 * are unchanged. A model whose optimizer state is sharded over the ranks
 * (--shard-optimizer-state) keeps its rank's part of each whole state
 * tensor of the file; its communicator must be set first. */
DLC_API dlc_status dlc_model_load(dlc_model *m, const char *safetensors_path);

/* Saves the params as a .safetensors file (names sorted, metadata
 * {"format":"pt"}). Atomic: writes "<path>.tmp.<pid>", fsyncs it and renames
 * it over `path`. With its optimizer state sharded over the ranks, the call
 * is collective: every rank calls it with the same path, rank 0 gathers the
 * shards and writes the whole state (the file of an unsharded model), and
 * every rank returns rank 0's success or DLC_ERR_IO. */
DLC_API dlc_status dlc_model_save(const dlc_model *m,
                                  const char *safetensors_path);

/* The bytes the model allocated at creation: its params and optimizer state
 * and one workspace for the intermediate tensors of its largest entry, in
 * one 2 MiB-aligned allocation (the NAME_MEMORY_BYTES of the generated
 * header: the compile-time plan, exactly). This is all the
 * memory a model holds: entries allocate nothing while they run (except
 * the matmul kernels' per-thread packing buffers, see
 * dlc_workspace_aligned_alloc). On CUDA: the size of the device allocation
 * (params, workspace, input/output staging and the cuBLASLt workspace, each
 * 256-byte aligned); the host keeps a mirror of the params besides.
 * -1 for a NULL model. */
DLC_API int64_t dlc_model_memory_bytes(const dlc_model *m);

/* The workspace part of it: the largest entry's planned temporaries. */
DLC_API int64_t dlc_model_workspace_bytes(const dlc_model *m);

/* The number of params; -1 for NULL. */
DLC_API int32_t dlc_model_num_params(const dlc_model *m);

/* Describes param `i` (in `param` order); `data` points into the arena and
 * may be read and written. Writes through it take effect at the next
 * dlc_model_run: a model whose forward pass reads weights re-laid out once
 * (dlc-pack-weights) lays them out again then, and on CUDA, where it points
 * into the host mirror of the params, this call first copies the params
 * from the device (when a run may have changed them) and the next
 * dlc_model_run uploads the mirror again. Write through a pointer kept
 * across runs only after calling this function again. */
DLC_API dlc_status dlc_model_param_info(const dlc_model *m, int32_t i,
                                        dlc_tensor_info *info);

/* The size of the param arena in bytes (the end of the last param rounded up
 * to 64; 0 without params); -1 for NULL. */
DLC_API int64_t dlc_model_param_bytes(const dlc_model *m);

/* The number of entry points; -1 for NULL. */
DLC_API int32_t dlc_model_num_entries(const dlc_model *m);

/* The index of the entry called `name`; -1 (and an error message) when there
 * is none. */
DLC_API int32_t dlc_model_find_entry(const dlc_model *m, const char *name);

/* The name of entry `e`; NULL for a bad model or index. */
DLC_API const char *dlc_model_entry_name(const dlc_model *m, int32_t e);

/* The number of inputs / outputs of entry `e`; -1 for a bad model or index. */
DLC_API int32_t dlc_model_entry_num_inputs(const dlc_model *m, int32_t e);
DLC_API int32_t dlc_model_entry_num_outputs(const dlc_model *m, int32_t e);

/* Describes input / output `i` of entry `e`; `data` is NULL. */
DLC_API dlc_status dlc_model_entry_input_info(const dlc_model *m, int32_t e,
                                              int32_t i, dlc_tensor_info *info);
DLC_API dlc_status dlc_model_entry_output_info(const dlc_model *m, int32_t e,
                                               int32_t i,
                                               dlc_tensor_info *info);

/* Runs entry `e`. `inputs` and `outputs` hold one host buffer per input and
 * output of the entry, in its order, each dense, row-major, of the declared
 * shape and aligned to its element size (checked: non-NULL and aligned).
 * `inputs` / `outputs` may be NULL when the entry has none. On CUDA, the
 * inputs are copied to the device, the entry runs on the model's stream (as
 * a CUDA graph from its second call on), the outputs are copied back, and
 * the call returns when all of it is done; a device failure is
 * DLC_ERR_DEVICE_UNAVAILABLE (DLC_ERR_OUT_OF_MEMORY for device memory) with
 * the CUDA error in the message. */
DLC_API dlc_status dlc_model_run(dlc_model *m, int32_t e,
                                 const void *const *inputs,
                                 void *const *outputs);

/* Host memory for entries' inputs and outputs that the model's device
 * copies from and to directly (PyTorch's pin_memory): on CUDA, page-locked
 * memory, which dlc_model_run copies to and from the device without its
 * own staging copy (a buffer anywhere inside such an allocation counts);
 * on the CPU, plain 64-byte aligned memory. `*out` gets the memory (one
 * byte at least), or NULL on failure (DLC_ERR_OUT_OF_MEMORY, or
 * DLC_ERR_DEVICE_UNAVAILABLE for a CUDA failure). Any other buffer works
 * as well with dlc_model_run, through one more copy on the host. */
DLC_API dlc_status dlc_model_alloc_host(dlc_model *m, size_t bytes, void **out);

/* Frees memory of dlc_model_alloc_host; NULL is a no-op. A pointer that is
 * not such memory of `m` (or is freed already) is DLC_ERR_INVALID_ARGUMENT
 * and left alone. What is not freed is freed by dlc_model_destroy. */
DLC_API dlc_status dlc_model_free_host(dlc_model *m, void *p);

/* Measures the entry of every later dlc_model_run (on: non-zero), or no
 * longer (0): the entry itself, without the copies of its inputs and
 * outputs. On CUDA two CUDA events are recorded on the model's stream
 * around the entry (its CUDA graph from the second run on), which adds
 * two cuEventRecord calls to each run; on the CPU the wall clock around
 * the entry's call. */
DLC_API dlc_status dlc_model_measure_entries(dlc_model *m, int on);

/* The entry time of the last dlc_model_run, in microseconds: on CUDA the
 * device's time between the two events, on the CPU the wall clock's. -1
 * when not measured (measuring off, no run since it was turned on, or a
 * failed run), or for NULL. */
DLC_API double dlc_model_last_entry_us(const dlc_model *m);

/*===-- Data parallelism (docs/distributed.md) ----------------------------===*/

/* A process's place in a data-parallel job: its rank among `size` ranks.
 * Models compiled with `dlc --train --data-parallel` average their
 * gradients and loss over the ranks through it. */
typedef struct dlc_comm dlc_comm;

typedef enum { DLC_REDUCE_MEAN = 0, DLC_REDUCE_SUM = 1 } dlc_reduce_op;

/* The buffers of an all-reduce bucket of several with fewer elements than
 * this travel packed into one message (a staging buffer of the runtime);
 * larger ones, and a bucket of one, are reduced in place. */
#define DLC_COMM_PACK_ELEMENTS 65536

/* A sharded optimizer's reduce-scatters and all-gathers carry this many
 * values of every rank's shard per message; a reduce-scatter's pieces go
 * through a buffer of the runtime of this many values per rank. */
#define DLC_COMM_SHARD_PIECE 65536

/* Joins the MPI job the process was started in (`mpirun -np N prog`; a
 * process started alone is a job of one rank): loads libmpi at run time
 * (DLC_MPI_LIBRARY, else Open MPI's libmpi.so.40; a program that never
 * calls this needs no MPI), initialises MPI (MPI_THREAD_SERIALIZED) unless
 * the program has, and uses MPI_COMM_WORLD. A collective waits at most
 * DLC_COMM_TIMEOUT seconds (default 300) for the other ranks, then fails
 * with DLC_ERR_COMMUNICATION. A job of one rank needs no MPI: with
 * DLC_MPI_LIBRARY=none, or when no MPI library loads and no launcher
 * variable (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK, WORLD_SIZE) says
 * the process is one of several ranks, the communicator is rank 0 of 1
 * without MPI. Otherwise no MPI library, or one that is not Open MPI's, is
 * DLC_ERR_DEVICE_UNAVAILABLE (DLC_ERR_INVALID_ARGUMENT for
 * DLC_MPI_LIBRARY=none in a job of several ranks). */
DLC_API dlc_status dlc_comm_create_mpi(dlc_comm **out);

/* Frees the communicator, and finalises MPI if dlc_comm_create_mpi
 * initialised it. NULL is a no-op. After a failed collective, end the job
 * with dlc_comm_abort instead: MPI_Finalize would wait for the lost rank. */
DLC_API void dlc_comm_destroy(dlc_comm *c);

/* This process's rank in [0, size) and the job's size; -1 for NULL. */
DLC_API int32_t dlc_comm_rank(const dlc_comm *c);
DLC_API int32_t dlc_comm_size(const dlc_comm *c);

/* This process's rank among the job's ranks on its machine, the CUDA
 * device it should take (dlc_model_create_on(desc, DLC_DEVICE_CUDA,
 * local_rank, ...)): LOCAL_RANK (torchrun's), else
 * OMPI_COMM_WORLD_LOCAL_RANK (mpirun's), else MPI_LOCALRANKID (MPICH's),
 * each only if in [0, size); else 0 in a job of one rank and the rank
 * otherwise. -1 for NULL. */
DLC_API int32_t dlc_comm_local_rank(const dlc_comm *c);

/* Sums (or averages) `count` floats in place over the ranks. */
DLC_API dlc_status dlc_comm_all_reduce(dlc_comm *c, float *data, int64_t count,
                                       dlc_reduce_op op);

/* Sets *same to 1 when every rank passed the same `bytes` bytes (compared
 * by a 64-bit hash), else 0: a check that replicas agree. */
DLC_API dlc_status dlc_comm_same_bytes(dlc_comm *c, const void *data,
                                       size_t bytes, int32_t *same);

/* Ends every rank of the job with exit status `code` (MPI_Abort). */
DLC_API void dlc_comm_abort(dlc_comm *c, int32_t code);

/* Gives the model the communicator its data-parallel entries reduce over
 * (NULL: none); `c` must outlive the model's runs. On CUDA the entries
 * reduce with NCCL (libnccl.so.2, 2.10 or later, loaded at run time;
 * DLC_NCCL_LIBRARY overrides the name): this call is then collective,
 * every rank calls it, and it creates the model's NCCL communicator (its
 * unique id broadcast over `c`); no NCCL is DLC_ERR_DEVICE_UNAVAILABLE.
 * Each rank's model must be on a device of its own (dlc_comm_local_rank).
 * A model whose optimizer
 * state is sharded needs a job of the ranks it was compiled for
 * (DLC_ERR_INVALID_ARGUMENT otherwise). Running such an entry
 * without one is DLC_ERR_INVALID_ARGUMENT; its collectives' failures are
 * dlc_model_run's status (DLC_ERR_COMMUNICATION). Whether entry `e` needs
 * one: dlc_model_entry_uses_comm. */
DLC_API dlc_status dlc_model_set_comm(dlc_model *m, dlc_comm *c);

/* 1 when entry `e` reduces over the ranks of a job (compiled with
 * --data-parallel), 0 when not, -1 for a bad model or index. */
DLC_API int32_t dlc_model_entry_uses_comm(const dlc_model *m, int32_t e);

/* The ranks the model's optimizer state is sharded over (compiled with
 * --shard-optimizer-state: its job must have that many, and every rank
 * calls dlc_model_save), 0 when it is not sharded, -1 for a bad model. */
DLC_API int32_t dlc_model_state_shards(const dlc_model *m);

/* Sets *same to 1 when the params (and optimizer state, but for the ranks'
 * own shards of a sharded one) are bit-identical on every rank of the
 * model's communicator, else 0. */
DLC_API dlc_status dlc_model_check_replicas(dlc_model *m, int32_t *same);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLC_DLC_RUNTIME_H */
