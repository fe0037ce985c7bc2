//===- Passes.td - dlc lowering and code generation passes -*- tablegen -*-===//
//
// Passes that leave the dlc dialect, grouped by stage and listed in the order
// the CPU pipeline runs them (lib/Target/Pipeline.cpp builds the pipeline):
//   1. dialect lowering:   dlc-lower-to-linalg
//   2. calling convention: dlc-lower-entry-abi
//   3. memory:             dlc-plan-memory (after bufferization)
//   4. CPU code generation: dlc-tile-and-vectorize, dlc-approximate-math
//   5. CUDA code generation: dlc-map-gemms, dlc-map-to-gpu, dlc-fuse-kernels,
//                            dlc-lower-gpu-launches, dlc-lower-warp-reductions,
//                            dlc-lower-math-to-nvptx
// Each is implemented in lib/Conversion/<Group>/<Name>.cpp and tested in
// test/Conversion/<snake_name>.mlir.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CONVERSION_PASSES_TD
#define DLC_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// 1. Dialect lowering
//===----------------------------------------------------------------------===//

def DlcLowerToLinalgPass : Pass<"dlc-lower-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lower dlc compute ops to linalg, tensor, arith and math";
  let description = [{
    Rewrites every dlc compute op into destination-style linalg ops on
    tensors: contractions become `linalg.matmul`/`linalg.batch_matmul`
    (a linear's `[out, in]` weight is transposed into `[in, out]` first, or,
    when the batch is smaller than the layer, the input is transposed and
    the matmul computes `W x^T`, so that every matmul has the layout the CPU
    tiling expects), elementwise ops and
    fused epilogues become `linalg.generic` with the broadcast expressed in
    the indexing maps, reductions and normalisations become
    `linalg.generic` reductions (numerically stable max-shifted forms for
    softmax, log-softmax and cross-entropy). `dlc.param` and
    `dlc.parameter` are left for `dlc-lower-entry-abi`.

    A recurrent layer (`dlc.lstm`, `dlc.gru` and their gradients) becomes an
    `scf.for` over its steps. Its batch rows never meet (each step
    multiplies every row of the state by the same weight), so the batch is
    split into up to `recurrent-blocks` equal blocks of at least 8 rows,
    the iterations of an `scf.for` marked `dlc.independent_iterations`,
    each running the whole loop over the steps on its rows;
    `dlc-parallelize-loops` runs it as an `scf.forall`, so the thread pool
    forks once per layer, not once per step, and the cell updates run in
    parallel too. Each row is computed by the same operations in the same
    order at any block count.

    ```mlir
    %y = dlc.relu %x : tensor<4xf32>
    // becomes
    %e = tensor.empty() : tensor<4xf32>
    %y = linalg.generic {...} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
      ^bb0(%in: f32, %out: f32):
        %m = arith.maximumf %in, %zero : f32
        linalg.yield %m : f32
    } -> tensor<4xf32>
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::bufferization::BufferizationDialect"];
  let options = [
    Option<"recurrentBlocks", "recurrent-blocks", "int64_t", /*default=*/"4",
           "Most blocks of batch rows whose steps run in parallel in a "
           "recurrent layer (1: one loop over the whole batch)">,
  ];
}

//===----------------------------------------------------------------------===//
// 2. Calling convention
//===----------------------------------------------------------------------===//

def DlcPrepareEntriesPass : Pass<"dlc-prepare-entries", "::mlir::ModuleOp"> {
  let summary = "Name the entry points by their object symbols, drop the rest";
  let description = [{
    The first step of lowering: what an object exports is its entries, so
    the `func.func` marked `dlc.loss` (the model's own loss, which
    dlc-build-train-step has called) is erased, every function that is not
    an entry becomes private (`symbol-dce` then drops the unused ones), and
    every entry is renamed to its symbol in the object: `dlc_<model>_<entry>`
    (the model's name is the module's `dlc.model`), then `suffix` appended.
    With `prefix=false` only the suffix is appended: the CUDA lowering of a
    module whose entries are already named adds `_cuda`.

    ```mlir
    module attributes {dlc.model = "mlp"} {
      func.func @forward(%x: tensor<4x8xf32>) -> tensor<4x2xf32> attributes {dlc.entry}
      func.func @loss(...) attributes {dlc.loss}
    }
    // becomes
    module attributes {dlc.model = "mlp"} {
      func.func @dlc_mlp_forward(%x: tensor<4x8xf32>) -> tensor<4x2xf32> attributes {dlc.entry}
    }
    ```
  }];
  let options = [
    Option<"prefix", "prefix", "bool", /*default=*/"true",
           "Name each entry dlc_<model>_<entry>">,
    Option<"suffix", "suffix", "std::string", /*default=*/"",
           "Append this to each entry's name">,
  ];
}

def DlcLowerEntryAbiPass : Pass<"dlc-lower-entry-abi", "::mlir::ModuleOp"> {
  let summary = "Give entry points the runtime's memref calling convention";
  let description = [{
    Rewrites every `func.func` marked `dlc.entry` from
    `(inputs) -> (outputs)` on tensors into a function that takes one
    memref per parameter (in `dlc.parameter` order), then one per input,
    then one per output, and returns nothing: `dlc.param` becomes a
    `bufferization.to_tensor` of the parameter's argument, and each returned
    tensor is written into its output buffer with
    `bufferization.materialize_in_destination`. The `dlc.parameter`
    declarations are then erased. This is the ABI of `docs/runtime-abi.md`;
    `dlc-write-outputs-in-place` then lets the ops of each output compute
    straight into the caller's buffer.

    ```mlir
    func.func @forward(%x: tensor<4x8xf32>) -> tensor<4x2xf32> attributes {dlc.entry}
    // becomes
    func.func @forward(%w: memref<2x8xf32>, %x: memref<4x8xf32>, %out: memref<4x2xf32>)
    ```
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect"];
}

def DlcWriteOutputsInPlacePass
    : Pass<"dlc-write-outputs-in-place", "::mlir::func::FuncOp"> {
  let summary = "Compute each entry output straight into the caller's buffer";
  let description = [{
    Before bufferization. An entry writes each output into its buffer with
    `bufferization.materialize_in_destination`, and a tensor that starts as
    `tensor.empty` bufferizes to a workspace buffer copied into the output
    at the end: a 1024 x 1024 matmul's result cost one more 4 MiB copy, on
    one thread, after the parallel GEMM. This pass follows the output back
    through the destination operands (`outs`) of the ops that produce it to
    the `tensor.empty` it starts from, and makes that operand a
    `bufferization.to_tensor` of the output buffer (`restrict writable`),
    so that the whole chain computes in place and the final copy is a copy
    onto itself, which the canonicalizer drops.

    It does so only where nothing else can see the buffer: every value
    between the output and the `tensor.empty` has one use (the next op's
    destination), and the output buffer has no other use than the
    `materialize_in_destination`, so no `restrict` claim is broken (a
    training step's parameter, read and then written, keeps its copy). A
    zero fill that CSE made shared by several accumulators is cloned for
    the output's chain; one-shot bufferization would not see that the copy
    into the output also writes the shared fill's buffer, which is why
    upstream `eliminate-empty-tensors` is not used here.

    ```mlir
    %e = tensor.empty() : tensor<64x10xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<64x10xf32>) -> tensor<64x10xf32>
    %y = linalg.matmul ins(%x, %w : ...) outs(%z : tensor<64x10xf32>) -> tensor<64x10xf32>
    bufferization.materialize_in_destination %y in restrict writable %out : (tensor<64x10xf32>, memref<64x10xf32>) -> ()
    // becomes
    %t = bufferization.to_tensor %out restrict writable : memref<64x10xf32> to tensor<64x10xf32>
    %z = linalg.fill ins(%zero : f32) outs(%t : tensor<64x10xf32>) -> tensor<64x10xf32>
    %y = linalg.matmul ins(%x, %w : ...) outs(%z : tensor<64x10xf32>) -> tensor<64x10xf32>
    bufferization.materialize_in_destination %y in restrict writable %out : (tensor<64x10xf32>, memref<64x10xf32>) -> ()
    ```
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::linalg::LinalgDialect"];
}

//===----------------------------------------------------------------------===//
// 3. Memory
//===----------------------------------------------------------------------===//

def DlcPlanMemoryPass : Pass<"dlc-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Place every intermediate buffer of an entry in one workspace";
  let description = [{
    Runs after bufferization and matmul tiling, on every `dlc.entry`
    function. Each `memref.alloc` of the function body (an intermediate
    tensor; allocations inside loops, like the matmul kernels' packing
    buffers, are per iteration and stay) gets an
    offset in one workspace buffer, a new last argument of the entry
    (`memref<Nxi8>`, `dlc.name = "workspace"`), and becomes a `memref.view`
    of it: the generated code allocates nothing, and the runtime allocates
    the workspace once, with the model.

    A buffer is live from its allocation to the last use of it or of any
    view of it (uses inside regions count at their top-level op). Buffers
    are placed greedily, largest first, each at the lowest 64-byte-aligned
    offset where it overlaps no placed buffer that is live at the same
    time, so buffers whose lifetimes do not overlap share memory. The plan
    is verified afterwards: any two buffers live at the same time occupy
    disjoint bytes. The workspace size is recorded on the function as
    `dlc.workspace_bytes`.

    ```mlir
    %a = memref.alloc() {alignment = 64 : i64} : memref<64x256xf32>
    // becomes, with %ws the new workspace argument
    %c0 = arith.constant 0 : index
    %a = memref.view %ws[%c0][] : memref<65536xi8> to memref<64x256xf32>
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def DlcLowerCollectivesPass : Pass<"dlc-lower-collectives", "::mlir::ModuleOp"> {
  let summary = "Lower the buffer form of dlc.all_reduce to calls of libdlcrt's communicator";
  let description = [{
    Runs after `dlc-plan-memory`. Each entry that holds a `dlc.all_reduce`
    on buffers gets one more argument after the workspace, the runtime's
    communicator context (`!llvm.ptr`, `dlc.name = "comm_ctx"`,
    docs/runtime-abi.md), and each all-reduce becomes one
    `dlc_comm_bucket_add(ctx, address, count, dtype)` per buffer and one
    `dlc_comm_bucket_reduce(ctx, reduction)` for the bucket (0 mean, 1
    sum), which reduces every buffer of the bucket in place. A buffer that
    is not contiguous is reduced through a contiguous copy.

    With `overlap`, the bucket is started instead
    (`dlc_comm_bucket_start`: the runtime's communication thread reduces
    it while the code goes on, the rest of the backward pass) and
    `dlc_comm_wait(ctx)` goes right before the first later op that uses
    one of the bucket's buffers or a view of it (the optimizer update), or
    before the return. The memory plan keeps the buffers live until then:
    that op reads them.

    With `device=cuda` (the CUDA host code, after `dlc-map-to-gpu` and its
    memory plan), the buffers are device memory and the calls are their
    CUDA forms, `dlc_cuda_comm_bucket_add(cuda_ctx, ...)` and so on
    (`dlc/dlc_cuda_abi.h`), on the entry's CUDA context argument instead of
    a communicator context: the runtime enqueues NCCL collectives on the
    model's stream (a started bucket on its communicator's stream). A
    strided view cannot be copied into one block by host code there: it is
    an error.

    ```mlir
    dlc.all_reduce %g {reduction = #dlc.reduction<mean>} : memref<4xf32>
    // becomes
    %a = memref.extract_aligned_pointer_as_index %g : memref<4xf32> -> index
    %p = arith.index_cast %a : index to i64
    call @dlc_comm_bucket_add(%comm_ctx, %p, %c4_i64, %c1_i32) : (!llvm.ptr, i64, i64, i32) -> ()
    call @dlc_comm_bucket_reduce(%comm_ctx, %c0_i32) : (!llvm.ptr, i32) -> ()
    ```
  }];
  let options = [
    Option<"overlap", "overlap", "bool", /*default=*/"false",
           "Reduce each bucket while the code goes on (on the runtime's "
           "communication thread; on CUDA, on the communicator's stream); "
           "wait before its buffers are used again">,
    Option<"device", "device", "std::string", /*default=*/"\"cpu\"",
           "cpu (calls of the communicator context) or cuda (calls on the "
           "CUDA context, device buffers)">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::func::FuncDialect"];
}

//===----------------------------------------------------------------------===//
// 4. CPU code generation
//===----------------------------------------------------------------------===//

def DlcTileAndVectorizePass : Pass<"dlc-tile-and-vectorize", "::mlir::ModuleOp"> {
  let summary = "Tile matmuls for the cache and registers and vectorise them";
  let description = [{
    Runs on bufferized IR. Every `linalg.matmul` is tiled twice, for the
    cache and for the registers, with tile sizes that divide the static
    dimensions so that every tile is full, then vectorised into
    `vector.contract`; the accumulator is hoisted out of the k loop and the
    contraction is lowered to outer products (FMAs). The hoisting decides
    from the k loop alone (`CPU/HoistAccumulators.cpp`): MLIR's own refuses
    any buffer that a view reads elsewhere in the function, such as a
    recurrent layer's gates, whose step slice the recurrent matmul
    accumulates into while the cell reads other slices. The schedule is a
    transform-dialect script built per module and applied with the
    transform interpreter.

    - 512-bit vectors (AVX-512): cache tiles up to 64 x 512 x 256, register
      tile 8 x 32 (16 zmm accumulators); an fp32 matmul whose N is a
      multiple of 64 takes 6 x 64 tiles (24 zmm accumulators: 4 loads of B
      and 6 broadcasts of A per 24 FMAs) and K tiles of 128 (a 32 KiB
      micro-panel).
    - 256-bit vectors (AVX2): cache tiles up to 128 x 256 x 256 whose B
      panel is first copied into a contiguous, aligned buffer (rows of
      1024 floats otherwise put every B load on the same few L1 sets),
      register tile 4 x 16 (8 ymm accumulators, leaving registers for the
      B row and the broadcasts); an fp32 matmul whose N is a multiple of
      32 takes 3 x 32 tiles (12 ymm accumulators: 4 loads of B and 3
      broadcasts of A per 12 FMAs).

    The cache tiles over M and N form an `scf.forall`, which the pipeline
    lowers to an OpenMP parallel loop run on libdlcrt's thread pool
    (`DLC_NUM_THREADS`).

    A product whose N is a single cache tile and whose B holds more than
    1 MiB (a large weight `[N_out, K]` times a small batch's `[K, 64]`,
    where every M tile reads the whole of B) takes M tiles of up to 256
    rows, while at least 4 of them remain, and K tiles of 512: with 64-row
    tiles, the big MLP's first layer read its 38.5 MB B 64 times per call.

    A register tile that does not divide its M tile (e.g. 6 rows of 128)
    has its M loop peeled, so that the main loop and the remainder both
    have static, full tiles. The schedule runs as three scripts: cache
    tiling, register tiling, then peeling and vectorisation on fresh
    handles.

    A matmul with 16-bit operands accumulating in fp32 (autocast's
    `linear` and `matmul`) copies each 16-bit cache tile of A and B, widened
    to fp32, into an aligned packing buffer inside the K loop; the register
    tiles then run the fp32 kernel. The model's tensors stay 16-bit: no
    fp32 copy of a weight or an activation exists outside the tiles.

    With `bf16-dot` (the target has AVX512_BF16, which the driver reads off
    the target machine) and 512-bit vectors, a matmul whose operands are
    both bf16 and whose accumulator is fp32 runs natively instead: B is
    packed with the two rows of every K pair interleaved (`[k/2][n][2]`
    bf16, rounded by `vcvtneps2bf16` from the fp32 value autocast cast
    when it reads one, as above), once before the parallel loop when
    several M tiles read it (at most 32 MiB of pairs), else per cache
    tile; a register tile of 8 x 32 fp32 accumulators takes one
    `x86vector.avx512.dot` (`vdpbf16ps`: two products per lane) per K
    pair, with the pair of A elements broadcast from A's row (packed too
    when it must be rounded or K is odd). Products of bf16 values are
    exact in fp32 and each pair is added with a rounding per product, as
    the FMAs of the widened kernel do; the instructions treat subnormal
    inputs and results as zero.

    With 512-bit vectors, the fp32 right operand of each cache tile, a
    `[Kt, Nt]` view of a row-major `[K, N]` buffer whose rows are `4N`
    bytes apart (a 2048-wide weight puts every row on the same L1 sets,
    out of reach of the prefetchers), is copied into `[Nt/nr][Kt][nr]`
    micro-panels and the cache tile becomes one matmul per panel: the
    register tiles stream B from consecutive lines, and a panel stays in L1
    while they sweep the rows of A (`pack-panels=false` reads B in place).
    When several M tiles read each cache tile of B and B is at most 64 MiB,
    the whole of B is copied into `[N/nr][K][nr]` panels once, before the
    parallel loop (its rows are independent iterations, run on the thread
    pool), and each cache tile reads a block of them: copied per cache
    tile, a 1024 x 1024 B was copied 16 times per call, a third of the
    1024^3 matmul's time. A B that a single M tile reads (a matmul of at
    most 64 rows, a 64-channel convolution) is read in place: its copy
    costs more than the conflicts it saves with so few rows to serve.

    `register-tile` and `cache-tile` override the sizes for experiments
    (the bf16 dot-product tile takes M rows and a multiple of 16 columns).

    2-D `linalg.transpose` ops whose dimensions are multiples of the vector
    width (a linear's weight re-laid-out for the matmul) are tiled into
    square register tiles, vectorised and lowered to in-register shuffles.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"512",
           "Widest vector register of the target, in bits (256 or 512)">,
    ListOption<"registerTile", "register-tile", "int64_t",
               "Register tile as M,N (default: chosen from vector-bits)">,
    ListOption<"cacheTile", "cache-tile", "int64_t",
               "Upper bounds of the cache tile as M,N,K (default: from vector-bits)">,
    Option<"bf16Dot", "bf16-dot", "bool", /*default=*/"false",
           "The target has AVX512_BF16: bf16 matmuls run on vdpbf16ps">,
    Option<"packPanels", "pack-panels", "bool", /*default=*/"true",
           "512-bit vectors: copy each fp32 cache tile of B into micro-panels">,
  ];
  let dependentDialects = ["::mlir::transform::TransformDialect",
                           "::mlir::x86vector::X86VectorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def DlcSplitBatchesPass : Pass<"dlc-split-batches", "::mlir::func::FuncOp"> {
  let summary = "Run batched matmuls and batched transposes as loops of 2-D ones";
  let description = [{
    Runs on bufferized IR before `dlc-tile-and-vectorize`, which tiles and
    vectorises `linalg.matmul` and 2-D `linalg.transpose` only. Every
    `linalg.batch_matmul` with the default indexing maps and every
    `linalg.transpose` of permutation `[0, 2, 1]` on static buffers
    (attention's `Q K^T` and `P V`, its key transposed, their gradients)
    becomes an `scf.for` over the batch whose body is the 2-D op on
    rank-reduced subviews of the batch. The batched ops otherwise run as
    scalar loops that keep their accumulator in memory. A transpose of
    permutation `[1, 2, 0]` (`[S, H, D] -> [H, D, S]`: an exporter's keys
    transposed per head straight from the projection's layout) is the same
    loop over the output's dimension 0, each iteration transposing the
    input's slice `[:, h, :]`; unsplit, its innermost loop read the input
    with a stride of `H * D` elements (vector gathers).

    The loop is marked `dlc.independent_iterations` (each iteration writes
    only its own batch), so `dlc-parallelize-loops` runs it as an
    `scf.forall` on the thread pool; each matmul's cache tiles then run on
    the thread of its batch. Every element is computed by the same
    operations in the same order at any thread count.

    ```mlir
    linalg.batch_matmul ins(%q, %kt : memref<32x128x64xf32>, memref<32x64x128xf32>)
                        outs(%s : memref<32x128x128xf32>)
    // becomes
    scf.for %b = %c0 to %c32 step %c1 {
      %qb = memref.subview %q[%b, 0, 0] [1, 128, 64] [1, 1, 1] : ... to memref<128x64xf32, strided<[64, 1], offset: ?>>
      ...
      linalg.matmul ins(%qb, %ktb : ...) outs(%sb : ...)
    } {dlc.independent_iterations}
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def DlcParallelizeLoopsPass
    : Pass<"dlc-parallelize-loops", "::mlir::func::FuncOp"> {
  let summary = "Run the large loop nests that are not matmuls on the thread pool";
  let description = [{
    Runs on bufferized IR after `dlc-tile-and-vectorize`, whose matmul cache
    tiles are already an `scf.forall`. Every other `linalg` op at the top
    level of a function (elementwise epilogues, normalisations, softmax,
    pools, the im2col copies of a convolution, partial reductions, the
    fused optimizer update, fills) whose static iteration space has at least
    `min-iterations` points is tiled along its first parallel loop that
    splits into between 2 and `chunks` equal tiles (the tile size divides
    the range, so every tile has the same static shape) into the tiles of
    an `scf.forall`, which the pipeline lowers to an OpenMP worksharing
    loop on libdlcrt's thread pool like the matmuls'.

    A loop is split only where it indexes every operand as a whole
    subscript (`d1`, not `d0 floordiv 49` or `d0 mod 7` as in an im2col
    copy, whose tiles would not be subviews). An op with a subscript that
    decreases along a loop (`-d2 + 2`, a convolution's flipped weight) is
    not split: tiling would give that operand a slice of one element. Only
    parallel loops are split, so every result element is computed by
    the same operations in the same order as before: the results are
    bit-identical at any thread count. An op without a parallel loop (a
    full reduction to a scalar) stays sequential.

    An `scf.for` that `dlc-lower-to-linalg` marked
    `dlc.independent_iterations` (a recurrent layer's blocks of batch rows,
    each writing only its own rows) becomes an `scf.forall` over the same
    range; the matmul tiles inside it then run on the thread that runs
    their block.

    ```mlir
    // 64 x 4096 elementwise (262,144 points) on 16 chunks of 4 rows:
    scf.forall (%i) in (16) {
      %x = memref.subview %in[%i * 4, 0] [4, 4096] [1, 1] ...
      linalg.generic ... ins(%x ...) outs(%y ...)
    }
    ```
  }];
  let options = [
    Option<"minIterations", "min-iterations", "int64_t", /*default=*/"65536",
           "Smallest iteration space that is split (smaller ones cost more "
           "to fork than they save)">,
    Option<"chunks", "chunks", "int64_t", /*default=*/"16",
           "Most tiles per op (more than the threads, so that uneven "
           "threads still balance)">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def DlcFuseElementwisePass : Pass<"dlc-fuse-elementwise", "::mlir::ModuleOp"> {
  let summary = "Fuse elementwise linalg ops, never reshaping a contraction";
  let description = [{
    Upstream's `linalg-fuse-elementwise-ops` (elementwise producer/consumer
    fusion, reshape propagation by expansion, constant folding), except
    that a `tensor.collapse_shape` or `tensor.expand_shape` next to a
    contraction (`linalg.matmul`, `linalg.batch_matmul`) is left alone.
    Upstream folds it into the contraction, which becomes a
    `linalg.generic` over more dimensions that `dlc-tile-and-vectorize`
    does not tile: a `flatten` before a `linear`, or the im2col buffer of a
    convolution collapsed to the GEMM's shape, would then run as scalar
    loops.

    Nothing inside an `scf.for` is rewritten: the steps of a recurrent
    layer write their results in place into slices of the sequences the
    loop threads through, destinations that fusion would replace.

    ```mlir
    %c = tensor.collapse_shape %x [[0], [1, 2, 3]] : tensor<64x16x3x3xf32> into tensor<64x144xf32>
    %y = linalg.matmul ins(%c, %w : ...) outs(%acc : ...)   // stays a matmul
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::tensor::TensorDialect"];
}

def DlcFoldBiasIntoMatmulPass
    : Pass<"dlc-fold-bias-into-matmul", "::mlir::ModuleOp"> {
  let summary = "Start a matmul's accumulators from its bias";
  let description = [{
    On the CPU, before bufferization. A `linalg.matmul` that accumulates
    into a zero-filled tensor and whose only user is an elementwise
    `linalg.generic` adding a bias broadcast over the rows (a `linear`'s
    epilogue, possibly with its activation; the result may first be split
    into more rows by `tensor.expand_shape`, as a recurrent layer's input
    projection is) accumulates into the bias broadcast to every row
    instead (when the bias is computed before the matmul), and the epilogue no longer adds it: one write of the result
    before the GEMM instead of a fill, then a read and a write after it.
    An epilogue left with nothing but a copy is folded by the
    canonicalizer.

    The sum is then `b + x0*w0 + x1*w1 + ...` rather than
    `(x0*w0 + x1*w1 + ...) + b`, a different rounding within the GEMM's
    own error. The CUDA pipeline keeps the zero-filled form, which
    `dlc-map-gemms` matches to cuBLASLt's bias epilogue.

    ```mlir
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<64x10xf32>) -> tensor<64x10xf32>
    %y = linalg.matmul ins(%x, %w : ...) outs(%z : tensor<64x10xf32>) -> tensor<64x10xf32>
    %r = linalg.generic ins(%y, %bias ...) { addf, maximumf }   // bias + relu
    // becomes
    %b = linalg.generic ins(%bias ...) outs(%e2 ...) { yield }   // bias in every row
    %y = linalg.matmul ins(%x, %w : ...) outs(%b : tensor<64x10xf32>) -> tensor<64x10xf32>
    %r = linalg.generic ins(%y ...) { maximumf }                  // relu
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def DlcShareRepeatedLoopsPass
    : Pass<"dlc-share-repeated-loops", "::mlir::ModuleOp"> {
  let summary = "Outline loop nests that occur more than once into one function each";
  let description = [{
    A deep model repeats its layers, and after tiling and vectorisation
    every repetition is its own copy of the same loop nests: a 66-layer MLP
    gives LLVM a train step of 150,000 lines, most of them the same few
    kernels over and over, and LLVM's time grows faster than the length.
    This pass, on the CPU code after `dlc-plan-memory`, finds top-level ops
    with regions (loop nests, `linalg` ops) of the module's functions that
    are the same computation on other buffers, and makes each such group
    one private function (internal linkage, `noinline`) that every member
    calls, with the buffers and scalars it uses from outside as arguments.
    Constants are cloned into the function, so that they are part of what
    must match.

    Two nests are the same when their outlined functions print the same:
    same ops, attributes, types (so the same shapes and layouts) and
    constants, and the same pattern of arguments (a nest reading one buffer
    twice is not the same as one reading two). A nest that occurs once
    stays where it is, so a model without repetition compiles as before.
    A nest that uses a value this cannot pass (a memref of dynamic shape or
    layout: the bare-pointer calling convention) or returns a memref stays
    too.

    ```mlir
    scf.for %i = %c0 to %c16 step %c8 { ... %w1 ... %view_1 ... }
    scf.for %i = %c0 to %c16 step %c8 { ... %w2 ... %view_2 ... }
    // becomes
    call @dlc_shared_loop_0(%w1, %view_1) : (memref<16x16xf32>, memref<8x16xf32>) -> ()
    call @dlc_shared_loop_0(%w2, %view_2) : (memref<16x16xf32>, memref<8x16xf32>) -> ()
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def DlcVectorizeReductionsPass
    : Pass<"dlc-vectorize-reductions", "::mlir::func::FuncOp"> {
  let summary = "Run the reductions along a row on vectors";
  let description = [{
    Runs on bufferized IR after `dlc-parallelize-loops`. A `linalg.generic`
    whose loops are parallel but for the last, a reduction (softmax's max
    and sum over a row, a normalisation's mean and variance, a loss's sum),
    would become a scalar loop that loads and stores the row's result at
    every element: its operands are views of one workspace, which LLVM
    cannot tell apart, so it neither keeps the result in a register nor
    vectorises the loop (0.75 ms of a transformer encoder layer's 34 ms
    went to softmax's row maximum alone, one element every 4 cycles).

    Such an op becomes loops over its parallel dims around a loop over the
    row in steps of one vector (`vector-bits` / 32 lanes) that carries the
    row's partial results in the lanes of a vector: lane 0 starts from the
    output's value and the others from the combiner's identity (`-0.0`
    for `addf`, `1` for `mulf`, `-inf` for `maximumf`, `+inf` for
    `minimumf`, NaN for `maxnumf` and `minnumf`), the body runs on vectors,
    and a `vector.reduction` (with `reassoc`: a tree over the lanes)
    combines the lanes into the output.

    ```mlir
    %init = memref.load %out[%i]
    %acc0 = vector.insert %init, %identity [0] : f32 into vector<16xf32>
    %acc = scf.for %k = %c0 to %c128 step %c16 iter_args(%a = %acc0) {
      %x = vector.load %in[%i, %k] : memref<32x128xf32>, vector<16xf32>
      %m = arith.maximumf %x, %a : vector<16xf32>
      scf.yield %m : vector<16xf32>
    }
    %r = vector.reduction <maximumf>, %acc fastmath<reassoc>
    memref.store %r, %out[%i]
    ```

    Handled: f32 operands, one output; the body's other ops element-wise
    (`arith`, `math`); every subscript a loop dim or a constant, the row's
    dim only as the last subscript of a unit-stride dimension (an operand
    that does not depend on it, the row's maximum in `exp(x - max)`, is
    broadcast); a static row length that is a multiple of the lanes.
    Anything else is left as it is.

    A maximum or minimum is exact in any order, so its result is
    unchanged. A sum or product is reassociated as every vectorising
    compiler does (lanes, then a tree), so its last bits differ from the
    sequential order; each row is still computed by one thread in one
    order, and the results do not depend on the thread count.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"512",
           "Widest vector register of the target, in bits (256 or 512)">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect"];
}

def DlcVectorizeCopiesPass
    : Pass<"dlc-vectorize-copies", "::mlir::func::FuncOp"> {
  let summary = "Run the copies that walk a row at a constant stride on vectors";
  let description = [{
    Runs on bufferized IR after `dlc-parallelize-loops`. A `linalg.generic`
    that only copies its input into its output, with every loop parallel,
    the output indexed by the identity and the last loop (the row) in the
    input's last subscript alone, at a constant stride of 1 to 4 (a
    convolution's im2col gather, `col[r, n, oh, ow] = x[n, r / 9, oh * s +
    r % 9 / 3, ow * s + r % 3]`), would become a scalar loop: its operands
    are views of one workspace, which LLVM cannot tell apart, and the rows
    of a few dozen elements are unrolled before its loop vectoriser sees
    them. ResNet-18's im2col copies ran one element per load and store,
    16% of its forward pass.

    Such an op becomes loops over its other dims around a loop over the
    row in steps of one vector (`vector-bits` / element bits lanes): each
    step loads the elements the stride spans (a masked load that stops at
    the last element read), keeps every `stride`-th with a shuffle
    (`vpermt2ps` on AVX-512) and stores a vector; the rest of the row is
    one masked load and store.

    ```mlir
    // col[r, n, oh, ow] = x[n, r floordiv 49, oh * 2 + ..., ow * 2 + r mod 7]
    scf.for %ow = %c0 to %c112 step %c16 {
      %i = affine.apply affine_map<(...) -> (d3 * 2 + d0 mod 7)>(...)
      %w = vector.maskedload %x[%n, %c, %h, %i], %mask31, %zero
          : memref<8x3x230x230xf32>, vector<32xi1>, vector<32xf32> into vector<32xf32>
      %v = vector.shuffle %w, %w [0, 2, 4, ..., 30] : vector<32xf32>, vector<32xf32>
      vector.store %v, %col[%r, %n, %oh, %ow] : memref<147x8x112x112xf32>, vector<16xf32>
    }
    ```

    Handled: 32- and 64-bit elements, static shapes, unit-stride last
    dimensions. The same elements are copied: results are bit-identical.
    Anything else is left as it is.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"512",
           "Widest vector register of the target, in bits (256 or 512)">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect"];
}

def DlcApproximateMathPass : Pass<"dlc-approximate-math", "::mlir::ModuleOp"> {
  let summary = "Replace transcendental math ops by polynomial approximations";
  let description = [{
    `math.exp`, `math.log`, `math.tanh`, `math.erf` and friends would lower
    to calls into libm, which a user's `cc app.c model.o -ldlcrt` link
    would then have to provide, and which block vectorisation. This pass
    expands them into the polynomial approximations of the math dialect
    (accurate to a few ulp in f32), so the object is self-contained.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

//===----------------------------------------------------------------------===//
// 5. CUDA code generation
//===----------------------------------------------------------------------===//

def DlcMapGemmsPass : Pass<"dlc-map-gemms", "::mlir::ModuleOp"> {
  let summary = "Turn the GEMMs of a bufferized entry into cuBLASLt calls with their epilogues";
  let description = [{
    Runs on entries placed on `cuda`, after bufferization and right before
    `dlc-map-to-gpu`, which maps everything it leaves. The entry gets one
    more argument, the runtime's CUDA context (`!llvm.ptr`, named
    `cuda_ctx`), which the calls take. First each copy of a buffer that a
    fill wrote last becomes a fill of the copy's target; then, in order,
    each GEMM that is not small (see below), of the entry or of a host
    loop's body (a recurrent layer's step: the call runs once per
    iteration; an operand at an offset known at run time only has its
    address computed on the host), becomes:

    | op | becomes |
    |---|---|
    | `linalg.matmul`, `linalg.batch_matmul` (row-major operands) | a call of `dlc_cuda_gemm` (cuBLASLt, fp32 accumulation; `beta = 1` keeps the accumulate-into-output semantics; a transpose feeding it becomes its transpose flag, also through a buffer that the next transpose overwrites, a zero fill `beta = 0`, also through a copy of a filled buffer, which becomes a fill) |
    | the fp32 `C + bias[j]` (then maybe a ReLU, or PyTorch's tanh GELU) loop right after a 2-D GEMM, also reading C transposed | cuBLASLt's BIAS / RELU_BIAS / GELU_BIAS epilogue of that call, which writes the loop's output (for a transposed read the GEMM computes C^T, operands swapped); never an activation in a step with fp16 loss scaling (`optimizer.loss_scale`): cuBLASLt's ReLU makes a NaN 0, and its GELU need not keep every infinity's NaN |
    | a ReLU loop after such a BIAS epilogue, when the pre-activation's only other reader is the ReLU's gradient loop (`pre > 0 ? g : 0`) and g is last written by a later 2-D GEMM | cuBLASLt's RELU_AUX_BIAS (the ReLU's output and a bit mask of where the pre-activation was positive, in a new mask buffer) and that later GEMM's DRELU epilogue through the mask, in place over g (the gradient loop's readers read g instead, up to the next overwrite of its buffer, when nothing else reads g): the pre-activation is never stored, both loops disappear; not with fp16 loss scaling either |
    | a bf16 GEMM (fp32 C, zero-filled) whose result buffer, a whole allocation, nothing but later loops read, each only to round it to bf16 (`arith.truncf` of the element: autocast's gradients) | the call stores the rounded result (`dtype_c` bf16; cuBLASLt rounds to nearest even, as `arith.truncf` does) into a new bf16 buffer, which the loops read in place of the rounding (not fp16: whether cuBLASLt's conversion overflows to infinity, as the loss scaler needs, is unconfirmed); for the bf16 big MLP 4 bytes of memory traffic less per parameter a step (the weight gradients written and read by the optimizer in half the bytes) |
    | else, a later fp32 loop summing one of an fp32 GEMM's operands over k into a zeroed buffer (a linear layer's bias gradient, next to its weight gradient), with that operand unwritten and the sum untouched in between | cuBLASLt's bias-gradient epilogue of that call (BGRAD_A or BGRAD_B), which writes the sum; the loop and its zero fill disappear |
    | a GEMM that cuBLASLt cannot take (other indexing maps, a strided inner dimension, other dtypes) | a kernel, as `dlc-map-to-gpu` makes it, before the later GEMMs are mapped |

    ```mlir
    linalg.transpose ins(%w : memref<256x784xf32>) outs(%wt : memref<784x256xf32>) permutation = [1, 0]
    linalg.fill ins(%zero : f32) outs(%y : memref<64x256xf32>)
    linalg.matmul ins(%x, %wt : memref<64x784xf32>, memref<784x256xf32>) outs(%y : memref<64x256xf32>)
    ```
    (a linear layer, x W^T) becomes one call of the runtime's
    `dlc_cuda_gemm(ctx, dtype_ab, dtype_c, batch, m, n, k, a, lda,
    stride_a, trans_a, b, ldb, stride_b, trans_b, beta, c, ldc, stride_c,
    epilogue, bias, aux)`, the transpose its flag and the fill `beta = 0`
    (pointers are `i64`: the aligned pointer of the buffer plus its static
    offset):
    ```mlir
    call @dlc_cuda_gemm(%cuda_ctx, %c0_i32, %c0_i32, %c1_i64, %c64_i64, %c256_i64,
        %c784_i64, %x_ptr, %c784_i64, %c0_i64, %c0_i32, %w_ptr, %c784_i64,
        %c0_i64, %c1_i32, %zero, %y_ptr, %c256_i64, %c0_i64, %c0_i32,
        %c0_i64, %c0_i64) : (!llvm.ptr, i32, i32, i64, ...) -> ()
    ```

    A small GEMM (fp32 output, at most 64 elements per dot product and
    `small-gemm-fmas` multiply-adds) is left to `dlc-map-to-gpu`, which
    makes it a kernel of a thread per output element, never a warp: the
    lesson's toy network's GEMMs (16 x 32 x 10 and smaller) cost a launch
    each as cuBLASLt calls, and as kernels `dlc-fuse-kernels` puts them in
    one block with the rest of the step.
  }];
  let options = [
    Option<"smallGemmFmas", "small-gemm-fmas", "int64_t", /*default=*/"16384",
           "GEMMs of at most this many multiply-adds (fp32 output, k <= 64) "
           "run as kernels instead of cuBLASLt calls; 0: none">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def DlcMapToGpuPass : Pass<"dlc-map-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Turn every loop nest of a bufferized entry into a GPU kernel or a device copy";
  let description = [{
    Runs on entries placed on `cuda`, after bufferization and
    `dlc-map-gemms` (which maps the GEMMs and the loops that cuBLASLt's
    epilogues take in): every buffer is an entry argument or an allocation,
    all in device memory (`dlc-plan-memory` places the allocations in the
    workspace later). The entry gets the runtime's CUDA context
    (`!llvm.ptr`, named `cuda_ctx`) as its last argument, unless
    `dlc-map-gemms` gave it one, and each top-level op becomes:

    | op | becomes |
    |---|---|
    | `memref.copy` between contiguous buffers, of more than 256 elements | a call of `dlc_cuda_memcpy` (a smaller copy, like a strided one, is a kernel, which fuses with the step's others) |
    | any other linalg op (after `dlc-fuse-elementwise`, one per fused region; a GEMM that `dlc-map-gemms` left: a small one, or any without it) | one `gpu.launch`: a thread per point of the parallel loops (256 per block, the last parallel dimension fastest, for coalesced accesses), each running the reduction loops of its point sequentially, its outputs carried in registers through them (read once, written once) unless an input views their memory |

    A reduction of at least 32 fp32 elements per point into at most 32768
    points, whose payload combines the output's value once (`addf`,
    `maximumf`, `minimumf`, `maxnumf`, `minnumf`, or `select %c, CONSTANT,
    %out`, an any-of reduction, which combines 0/1 flags of `%c` with
    `maximumf` and selects the constant where their maximum is 1) and
    yields the result, runs a warp per point instead (8 points a block):
    each lane combines elements lane, lane + 32, ... of the flattened
    reduction loops (the last fastest, so a row's lanes read consecutive
    elements) from the combiner's identity, `gpu.subgroup_reduce` combines
    the lanes, and lane 0 combines the result into the output.

    Such a reduction into few points of many elements each (at most 4096
    points of at least 2048 elements), where a warp per point would leave
    most of the GPU idle and each lane's loads in a long sequence, splits
    each point's elements into min(elements / 1024, 8192 / points) slices
    of consecutive elements of the flattened reduction loops (32 or more a
    lane; at most about 8192 warps in all, what an H100 or H200 holds at
    once): a warp per slice combines its elements as above
    into a buffer of one partial result per slice (a new allocation), and
    a second kernel, a warp per point, combines the point's partials (lane
    l those l, l + 32, ...) and lane 0 the result into the output. fp16
    loss scaling's check of every gradient for infinities and NaNs (one
    flag a gradient; 616M elements for the big MLP's first weight) and a
    loss over a batch of 2048 or more are such reductions. The slices'
    kernel names its points `[points..., slices]` and annotates no access
    for `dlc-fuse-kernels`.

    Each kernel tells `dlc-fuse-kernels` its points (`dlc.points`, the
    parallel loops' ranges; empty for one point), a warp per point
    (`dlc.lanes = 32`) and, on each load and store of an element that is a
    function of the point alone (an operand whose indexing map uses no
    reduction loop), that function over the parallel loops
    (`dlc.point_map`), with `dlc.every_lane` where every lane of the
    point's warp makes the access (a warp's reads of its inputs; the rest
    are the point's first thread's).

    Views, casts and constants stay on the host: they only compute
    addresses. Anything else that would read device memory on the host is
    an error naming the op. Pointers are passed to the runtime as `i64`
    (the aligned pointer of the view, plus its static offset).

    An `scf.for` without loop-carried values (a recurrent layer's loop over
    its steps, and the loop over its batch blocks) stays on the host, its
    body mapped like the entry's: each iteration launches its kernels and
    calls its GEMMs, all recorded in the entry's CUDA graph. A loop with
    loop-carried values is an error. A view at an offset known at run time
    only (a step's slice of a sequence) crosses into a kernel as the whole
    buffer under it, which must have a static shape and identity layout,
    indexed from that offset (`memref.extract_strided_metadata` on the
    host, a kernel parameter). An op that reads or writes one of two
    buffers chosen on the host (`arith.select` of memrefs: a backward
    step's initial state at the first step, the state saved by the step
    before at the others) becomes an `scf.if` whose branches run it on
    each buffer, each mapped.

    ```mlir
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%x : memref<1024xf32>) outs(%y : memref<1024xf32>) { ... }
    ```
    becomes a `gpu.launch` of 4 blocks of 256 threads whose body guards
    `i < 1024`, loads `%x[i]`, runs the payload and stores `%y[i]`.

    A GEMM is such a kernel too, a thread per output element, never a
    warp (see `dlc-map-gemms`, which leaves the small ones).

    Scalars read from device memory (the optimizer's step, the loss scale)
    and computed from them are computed by single-thread kernels
    (`dlc.points = []`) that store each value a later op uses into a new 0-d
    buffer, which the later kernels read.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def DlcFuseKernelsPass : Pass<"dlc-fuse-kernels", "::mlir::ModuleOp"> {
  let summary = "Fuse adjacent GPU kernels: one thread space into one kernel, small kernels into one block, independent kernels side by side";
  let description = [{
    Runs after `dlc-map-to-gpu`, before `dlc-plan-memory` (while distinct
    allocations and entry arguments are distinct memory). A training step
    maps to many small kernels, and on a GPU each costs a launch (a node of
    the step's CUDA graph) that can take longer than its work: a softmax
    row's max and sum and their fills are four kernels of one thread per
    row, the loss and its mean three of one thread, the optimizer one
    kernel per parameter. Two launches are adjacent when only host
    arithmetic and allocations separate them (a GEMM or a copy between
    them is device work in stream order); the fused launch takes the
    place of the later one. The launches of a host loop's or branch's
    block (a recurrent layer's step) fuse among themselves, never with a
    launch outside that block. In order:

    0. **Past runtime calls.** With `one-block`, a launch moves up past the
       runtime calls before it (GEMMs, copies) when none of the buffers
       whose addresses a call takes is one the launch touches (a call with
       any other pointer operand stops it), to just after the launch before
       them, with the allocations and pure ops it uses from in between: a
       kernel that only reads and writes the optimizer's step count moves
       above the backward GEMMs, next to the loss's kernel.
    1. **One thread space.** Adjacent launches that `dlc-map-to-gpu` made
       over the same points (its `dlc.points` attribute) become one kernel
       in which each point runs the first body and then the second, when
       no point can see another's writes: for every buffer that either
       kernel writes and both access, every access in both is annotated
       (`dlc.point_map`) with the same injective function of the point,
       through the same view. Kernels of a thread per point need the same
       grid and block, and so do kernels of a warp per point; a kernel of
       a thread per point joins one of a warp per point on each warp's
       first lane (the thread that makes the warp's annotated accesses but
       those marked `dlc.every_lane`), with the warp's grid and block.
       Where an access of every lane meets the first lane's writes, a
       `gpu.barrier` separates the two bodies. Kernels of a single thread
       always qualify. A row's fill, max, fill and sum become one kernel
       (a thread per row for short rows; for long rows a warp per row, its
       max and sum separated by a barrier), as do a loss's fill, sum and
       mean (the fill and the mean on the first lane).
    2. **One block.** A run of adjacent launches that each have at most
       1024 threads in all (grid times block), and whose threads work
       together at most within a warp (no barrier), becomes one launch of
       a single block, as many threads as the largest (whole warps):
       thread t runs thread t of each kernel in turn, as its block
       t / block and thread t % block, and threads beyond a kernel's do
       nothing (a kernel of a warp per point runs unguarded there, so
       that its warps reach their reductions whole: dlc-map-to-gpu's
       guard of the point's range keeps them from memory). Before a kernel that touches a buffer that a kernel since
       the last barrier wrote, or writes one that it touched, comes a
       `gpu.barrier`, which also makes the block's global writes visible
       to the whole block. A small step (the lesson's toy network, whose
       GEMMs are kernels) becomes one launch.
    3. **Side by side.** A run of adjacent launches of which none writes a
       buffer that another accesses (buffers compared by their allocation
       or entry argument) becomes one launch whose block is that of the
       kernel with the most threads, so that the largest runs as it was
       mapped. Each kernel has a range of blocks: a kernel of that block,
       or of a single smaller block, keeps its blocks (its block index
       counted from the range's start; threads beyond its block size do
       nothing); any other (a one-block kernel of 1024 threads beside an
       update of millions of parameters) runs its threads in order over
       as many blocks of the new size as they fill, as its linear thread,
       threads beyond its count doing nothing. So no block of the large
       kernel carries idle threads. The optimizer's update of every
       parameter becomes one kernel.

    No fusion makes a kernel of more parameters than `max-param-bytes`
    allows (8 bytes for each value that a body uses from outside it, but
    constants): a run that would ends there and the next starts, so the
    optimizer's update of a model of many parameter tensors becomes as
    many kernels as the 4 KiB that a kernel's parameters may take demand.

    An access without `dlc.point_map`, or a memory effect the pass cannot
    attribute to a buffer, only ever prevents fusion. The annotations are
    removed at the end.
  }];
  let options = [
    Option<"oneBlock", "one-block", "bool", /*default=*/"true",
           "Move launches past runtime calls that touch none of their "
           "buffers (step 0) and fuse runs of kernels that each fit one "
           "block into one block (step 2)">,
    Option<"maxParamBytes", "max-param-bytes", "int64_t",
           /*default=*/"4096",
           "The most bytes of parameters a fused kernel may take, at 8 "
           "bytes a value that its body uses from outside (constants "
           "aside): CUDA's limit for the PTX dlc emits is 4 KiB">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def DlcLowerGpuLaunchesPass : Pass<"dlc-lower-gpu-launches", "::mlir::ModuleOp"> {
  let summary = "Merge the outlined kernels into one module; launches become runtime calls";
  let description = [{
    After `gpu-kernel-outlining`: moves every kernel into one `gpu.module
    @dlc_kernels` (kernel `k` is named after its outlined module, so names
    stay unique) and replaces each `gpu.launch_func` with a call of
    `dlc_cuda_launch(ctx, k, grid x/y/z, block x/y/z, num_args, args)`,
    where `args` is a host array of 8-byte kernel parameters: the aligned
    pointer of each memref (the kernels use the bare-pointer convention, so
    memrefs must have the identity layout) and each index as `i64`. The
    module gets `dlc.cuda_kernels`, the kernel names in index order, which
    the object emitter writes next to the PTX (docs/runtime-abi.md).
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def DlcLowerWarpReductionsPass : Pass<"dlc-lower-warp-reductions", "::mlir::ModuleOp"> {
  let summary = "Lower warp reductions (gpu.subgroup_reduce) to butterflies of warp shuffles";
  let description = [{
    The reductions that `dlc-map-to-gpu` runs with a warp per output combine
    the 32 lanes' values with `gpu.subgroup_reduce`. This pass rewrites each
    into five `gpu.shuffle xor` steps (lane i combines its value with lane
    i xor 1, 2, 4, 8 and 16, its own value first), which
    `convert-gpu-to-nvvm` turns into `shfl.sync.bfly`: every lane ends with
    the result, combined in the order that `dlc-emulate-gpu-launches`
    reproduces. Only reductions of 32-bit values over the whole warp are
    accepted; anything else is an error naming the op.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::arith::ArithDialect"];
}

def DlcLowerMathToNvptxPass : Pass<"dlc-lower-math-to-nvptx", "::mlir::ModuleOp"> {
  let summary = "Lower the math ops left in GPU kernels to NVPTX intrinsics, not libdevice";
  let description = [{
    `convert-gpu-to-nvvm` turns math ops into calls of CUDA's libdevice
    (`__nv_sqrtf`, `__nv_fmaf`, ...), which only link where the CUDA
    toolkit is installed. After `dlc-approximate-math`, the kernels of a dlc
    model only keep `fma`, `sqrt`, `floor`, `ceil` and `absf`, which PTX
    has as instructions. In every `gpu.module`, this pass rewrites them:

    | op (f32, f64) | becomes |
    |---|---|
    | `math.fma` | `llvm.intr.fma` (`fma.rn`) |
    | `math.sqrt` | `llvm.nvvm.sqrt.rn.f` / `.d` (correctly rounded, as on the CPU) |
    | `math.floor`, `math.ceil` | `llvm.nvvm.floor.f` / `llvm.nvvm.ceil.f` (`.d`) |
    | `math.absf` | the sign bit cleared (`arith.andi` on the bits) |

    Any other math op left in a kernel is an error: it would need
    libdevice.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::arith::ArithDialect"];
}

def DlcEmulateGpuLaunchesPass : Pass<"dlc-emulate-gpu-launches", "::mlir::ModuleOp"> {
  let summary = "Run the kernels of dlc-map-to-gpu as host loops (a test of the GPU lowering)";
  let description = [{
    Replaces every `gpu.launch` by two `scf.for` loops, over the blocks and
    over the threads of a block, around the kernel body, with the block and
    thread ids bound to the loop indices. The kernels then run on the CPU,
    in order, with the same index arithmetic, guards, reduction loops and
    device-scalar buffers as on the GPU: `dlc run --cuda-emulate` checks
    the numerics of the whole CUDA lowering against PyTorch on a machine
    without a GPU. Only one-dimensional grids and blocks (what
    `dlc-map-to-gpu` emits) are accepted. A kernel whose threads wait for
    each other (`gpu.barrier`, or `gpu.subgroup_reduce` of a whole warp, at
    the top level of the body) runs in parts, block by block: the threads
    of the block run the body up to the next such op one after the other;
    a reduction's values are combined, warp by warp, in the order of the
    GPU's butterfly of shuffles (lane i with lane i xor 1, 2, 4, 8, 16);
    the threads run on with the result. Pure values used across a part are
    recomputed for each thread. The runtime calls become calls of
    host references with the same arguments (`dlc_cuda_gemm` ->
    `dlc_emulated_gemm`, `dlc_cuda_memcpy` -> `dlc_emulated_memcpy`, which
    `dlc run --cuda-emulate` provides), so the GEMM arguments (leading
    dimensions, transposes, beta, batch strides) are checked too, and the
    entries lose the `cuda_ctx` argument: they keep the CPU calling
    convention.

    With `reverse`, the blocks, the warps and the threads run last to
    first. Kernels whose threads do not depend on each other give the same
    results either way; a kernel that reads what another of its threads
    writes (a wrong fusion, a race on the GPU) gives other results in one
    of the two orders: `test/e2e/cuda/emulated.test` runs the training
    tests in both.
  }];
  let options = [
    Option<"reverse", "reverse", "bool", /*default=*/"false",
           "Run the blocks, warps and threads of each kernel last to first">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def DlcCollectCudaCodePass : Pass<"dlc-collect-cuda-code", "::mlir::ModuleOp"> {
  let summary = "Move the kernels' PTX into a module attribute for the object";
  let description = [{
    Runs after `gpu-module-to-binary{format=isa}`: the PTX text of every
    `gpu.binary` is concatenated, in order, into the module's
    `dlc.cuda_ptx` string attribute, the binaries are erased and the module
    stops being a GPU container, so that the host side lowers to the LLVM
    dialect alone. The object emitter embeds `dlc.cuda_ptx` and the kernel
    names of `dlc.cuda_kernels` (dlc-lower-gpu-launches) in the object.

    ```mlir
    module attributes {gpu.container_module, dlc.cuda_kernels = ["k0"]} {
      gpu.binary @kernels [#gpu.object<#nvvm.target, "// PTX ...">]
    }
    // becomes
    module attributes {dlc.cuda_kernels = ["k0"], dlc.cuda_ptx = "// PTX ..."} {
    }
    ```
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

#endif // DLC_CONVERSION_PASSES_TD
