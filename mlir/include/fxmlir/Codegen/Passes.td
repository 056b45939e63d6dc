//===- Passes.td - JIT region passes -----------------------*- tablegen -*-===//
//
// The passes that turn the functions fxmlir-outline-jit-regions outlined
// (Transforms/) into JIT-compiled code: lowering them to linalg, and the
// steps of the CPU and CUDA pipelines that upstream MLIR has no pass for. The
// pipelines that chain them are registered in lib/Codegen/Pipelines.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_CODEGEN_PASSES_TD
#define FXMLIR_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertFxmlirToLinalg : Pass<"fxmlir-convert-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lower the fxmlir ops of JIT functions to linalg on tensors";
  let description = [{
    Rewrites every function of the module (outlined JIT regions) into
    `linalg.generic` ops on builtin tensors without device encodings or
    signedness. Shapes are recomputed from the function's argument types with
    torch broadcasting (size-1 dims broadcast, `?` dims are assumed equal to
    the dims they meet), so a caller may specialize or generalize the
    arguments first. f16/bf16 math runs in f32 and is rounded where torch
    rounds: after every op, and once at the end of softmax/layer norm.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect"];
}

def FuseElementwise : Pass<"fxmlir-fuse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Fuse elementwise linalg ops, recomputing small producers with several users";
  let description = [{
    Upstream elementwise fusion, except that an elementwise producer with
    several users is fused into each of them when the fused body stays small
    (`max-recompute-ops`, so that recomputation grows code linearly) and the
    producer has no `math` op: recomputing a few arithmetic
    ops is cheaper than a temporary buffer the size of the tensor, while
    recomputing exp or tanh is not (softmax's exp(x - max), which feeds both
    its sum and its result, stays one). A producer its consumer reads through a
    broadcast (a per-row statistic such as layer norm's rstd) is not fused:
    it would be recomputed for every element of the row.

    An elementwise op reading a concatenation (`tensor.concat`) is computed
    per piece on slices of its other operands, and its results concatenated
    (SplitAtConcat.cpp); a slice of an elementwise producer is computed on
    slices of its operands when the producer could be recomputed. So
    concatenations move towards the results, each piece fuses with what it
    reads, and no element is read at a computed index. The concatenations
    left become writes of each piece into its slice of the result.

    A producer whose other users all come after the consumer (a function
    result) is fused too, its value yielded by the fused op: nothing is
    recomputed. Last, elementwise ops over the same elements that read a
    common operand (siblings, FuseSiblings.cpp) become one op with all their
    results: one loop nest reading the shared operand once.
  }];
  let options = [
    Option<"maxRecomputeOps", "max-recompute-ops", "unsigned", /*default=*/"24",
           "Largest body (in ops) a consumer may reach by recomputing a producer "
           "that has several users">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def PrivateFills : Pass<"fxmlir-private-fills", "::mlir::func::FuncOp"> {
  let summary = "Give each op that writes into a filled empty tensor a fill of its own";
  let description = [{
    A `linalg.fill` of a `tensor.empty` that several destination-style ops
    write into (two reductions' shared accumulator) keeps its first writer;
    each other gets a new empty tensor and fill before it. Bufferized, the
    shared fill became a fill and a copy per extra writer; own fills fold
    into the GPU reduction mappings, which write every output element.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def OutputsToParams : Pass<"fxmlir-outputs-to-params", "::mlir::func::FuncOp"> {
  let summary = "Make each function result a destination argument written in place";
  let description = [{
    Appends one tensor argument per result and makes the op producing the
    result write into it (or copies into it), so that after one-shot
    bufferization the caller passes the output buffers and no result is
    copied. Results are kept (bufferization drops them as equivalent to the
    new arguments).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def StridedCopiesToLinalg : Pass<"fxmlir-strided-copies-to-linalg", "::mlir::func::FuncOp"> {
  let summary = "Copies between non-contiguous buffers as linalg.copy";
  let description = [{
    Bufferization copies a value it cannot compute in place (a piece of a
    concatenation written twice) with `memref.copy`. Between contiguous
    buffers that is one memcpy; between slices it would be a call of MLIR's
    C runner library (`memrefCopy`), which the JIT does not link, or an
    invalid contiguous `gpu.memcpy` on the device. Those become `linalg.copy`,
    lowered to loops or kernels like any other linalg op.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def ApproximateMath : Pass<"fxmlir-approximate-math"> {
  let summary = "Replace f32 transcendental math ops by polynomial approximations";
  let description = [{
    exp, log, tanh, erf, ... become arithmetic that vectorizes on CPUs and
    needs no libdevice on NVIDIA GPUs; f16/bf16 math is first widened to f32.
    f64 math is left to libm (CPU). `math.powf` and friends are expanded
    first so that they reach approximated ops.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def TileParallelLoops : Pass<"fxmlir-tile-parallel-loops", "::mlir::func::FuncOp"> {
  let summary = "Collapse outermost scf.parallel loops to one dim, tiled into blocks of threads";
  let description = [{
    Collapses each outermost `scf.parallel` without reductions into one dim
    (row-major: consecutive iterations are consecutive elements of the last
    dim) and tiles it by `block-size`, without min/max bounds: threads past
    the end are masked by the loop's own bound check. `gpu-map-parallel-loops`
    then maps it to blocks and threads along x alone, whatever its rank and
    sizes: no thread dim past the device's limits (z takes at most 64), no
    grid dim past 65535 on y or z, memory accesses coalesced, and no block of
    idle threads where the last dim is short.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect"];
}

def MathToLLVMIntrinsics : Pass<"fxmlir-math-to-llvm-intrinsics"> {
  let summary = "Call the LLVM intrinsics of math ops that GPUs implement natively";
  let description = [{
    `math.sqrt`, `floor`, `ceil`, `absf`, `fma`, `copysign` and
    `arith.maxnumf`/`minnumf` become `llvm.call_intrinsic` of `llvm.sqrt`,
    `llvm.floor`, ..., `llvm.maxnum`, which the NVPTX
    backend emits as single instructions. Run before `convert-gpu-to-nvvm`,
    which would otherwise call libdevice (`__nv_sqrtf`, ...) for them, and
    rejects the `llvm.intr.*` ops `convert-math-to-llvm` makes. Together with
    `fxmlir-approximate-math`, kernels need no libdevice.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def FuseSiblingReductions : Pass<"fxmlir-fuse-sibling-reductions", "::mlir::func::FuncOp"> {
  let summary = "Merge reductions over the same loops that share an operand (CPU)";
  let description = [{
    Two `linalg.generic` reductions with the same iterator types that read a
    common operand through a map naming every loop become one op with both
    results, while the merged op has at most a dozen operands: a layer
    norm's backward sums two products over each row and two over the rows,
    each pass reading the same gradient and input again. The CPU's loops
    then walk the shared rows once per pair. Not in the CUDA pipeline, whose
    row reductions map one reduction to a block.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def FuseRowLoops : Pass<"fxmlir-fuse-row-loops", "::mlir::func::FuncOp"> {
  let summary = "Run consecutive linalg ops on buffers row by row in one loop nest (CPU)";
  let description = [{
    The rows are the leading dims of the function's widest arguments (all
    but the innermost). Consecutive linalg ops on buffers whose first loops
    run over those rows become one `scf.for` nest over them, each op applied
    to its buffers' slices at the row, when every buffer one of them writes
    is read and written by all of them at the row's own indices (or by one
    op alone: a sum over the rows), so that no op reads a row another has
    yet to write. Views, allocations and ops that touch none of the group's
    buffers between them move above the nest. Rows of fewer than 64
    elements are left as they are. Runs after bufferization, before
    deallocation.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"];
}

def ExpandBF16Conversions : Pass<"fxmlir-expand-bf16-conversions"> {
  let summary = "Expand f32 <-> bf16 conversions into integer ops";
  let description = [{
    `arith.truncf` to bf16 (rounding to nearest even, NaN kept) and
    `arith.extf` from bf16 become bit operations, so that CPUs without
    AVX512-BF16 need no compiler-rt `__truncsfbf2` at run time. Conversions
    between f16/bf16 and f64 or integers go through f32 first, as
    c10::Half and c10::BFloat16 convert (no `__truncdfbf2`,
    `__truncdfhf2`). A select of f16/bf16 values selects their bits (x86
    has no 16-bit float select: LLVM would promote it through f32 and call
    `__truncsfbf2` to come back). Unlike
    `arith-expand{include-bf16}`, min/max ops stay as they are: expanded into
    compares and selects, LLVM no longer vectorizes them as reductions.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def StoreHalfAsBits : Pass<"fxmlir-store-half-bits"> {
  let summary = "Store 16-bit floats made from integer bits as those bits";
  let description = [{
    An `llvm.store` of an `llvm.bitcast` from i16 to f16/bf16 (or vectors of
    them) stores the i16 instead. A bf16 truncation ends in a select of its
    bits (`fxmlir-expand-bf16-conversions`); LLVM's InstCombine moves the
    bitcast above that select, and x86 without AVX512-BF16 has no vector
    bf16 select, so the vectorized loop tested and stored each lane on its
    own (a bf16 `silu * mul` region took 2.3x its float32 twin's time).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def GpuColumnReductions : Pass<"fxmlir-gpu-column-reductions", "::mlir::func::FuncOp"> {
  let summary = "Map reductions over rows to GPU blocks of adjacent columns";
  let description = [{
    A `linalg.generic` on buffers whose innermost loop is parallel and whose
    other loops include reductions (a sum over rows: a bias or norm weight
    gradient), reading its inputs with that loop's index innermost and
    combining with one op (as `fxmlir-gpu-row-reductions` takes), becomes a
    `gpu.launch` of one block per 16 adjacent columns (and outer parallel
    index): a thread per column and 32 threads down each column, each
    folding every 32nd reduced row, so that a warp's loads are contiguous;
    the 32 partial results of a column meet in shared memory and its first
    thread folds them into the output. Before it, such a reduction became a
    row reduction of the transposed input, a block per column whose warps
    read 32 rows apart.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def GpuReductionsInnermost : Pass<"fxmlir-gpu-reductions-innermost", "::mlir::func::FuncOp"> {
  let summary = "Put a linalg.generic's reduction loops inside its parallel ones";
  let description = [{
    Interchanges the loops of every `linalg.generic` whose reduction loops
    are not innermost (a sum over rows: a bias or LayerNorm weight gradient)
    so that its parallel loops come first, each group in its order. The
    parallel-loop mapping keeps loop order: an outer reduction loop stayed
    on the host, launching a kernel per reduced index. Innermost, one kernel
    computes every output; a single reduction loop is then a row reduction
    for `fxmlir-gpu-row-reductions` (a block per output). Reductions over
    rows read contiguously are `fxmlir-gpu-column-reductions`' before it.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def GpuRowReductions : Pass<"fxmlir-gpu-row-reductions", "::mlir::func::FuncOp"> {
  let summary = "Map reductions over the last dim to one GPU block per row";
  let description = [{
    A `linalg.generic` on buffers that reduces its last loop dim (the row)
    with one combining op (add, mul, max/min in their float and signed
    flavors) becomes a `gpu.launch` with one block per row: each thread
    folds a strided part of the row, `gpu.all_reduce` (warp shuffles, then
    shared memory) combines the threads, and thread 0 folds the result into
    the output. A block has as many whole warps as the row needs, at most
    `block-size` threads (a row of 16 takes one warp). Reads are coalesced,
    where the parallel-loop mapping would give each row to one thread.
    Other linalg ops are left for that mapping.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Most threads per row">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def GpuVectorizeElementwise : Pass<"fxmlir-gpu-vectorize-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Map elementwise linalg ops to GPU threads of several elements with 16-byte accesses";
  let description = [{
    A `linalg.generic` on buffers whose loops are all parallel and whose
    operands are indexed by loop dims and constants becomes a `gpu.launch`
    (kernel `<function>_elementwise`) in which each thread computes `width`
    consecutive elements of the last dim: 16 bytes of the widest element
    type among the operands read or written contiguously along that dim
    (4 x f32, 8 x bf16, 2 x f64). Those operands (identity layout, last
    index the last loop dim, not i1) are read and written with
    `vector.load`/`vector.store` aligned to their width; the others are read
    once per thread (broadcast along the last dim) or element by element.
    The body is cloned once per element on scalars, so that results are
    those of one element per thread, bit for bit.

    The vector accesses are only taken when the last dim is a multiple of
    `width` and every vector operand's data pointer is aligned to its width:
    the kernel checks both (uniformly for the whole grid; a static size
    folds the check) and otherwise runs a scalar loop over the thread's
    elements. Views of torch tensors start anywhere, so the pointer check
    is what makes the vector path safe. A static last dim that `width` does
    not divide is left to the one-element-per-thread mapping.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::arith::ArithDialect"];
}

def GpuLowerAllReduce : Pass<"fxmlir-gpu-lower-all-reduce", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Lower gpu.all_reduce in kernels to shuffles and shared memory";
  let description = [{
    Upstream's all-reduce rewrite, run before the kernels' math is made
    NVPTX-native (`fxmlir-math-to-llvm-intrinsics`): the combining ops it
    creates (`arith.maxnumf`, ...) must go through that pass too.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::cf::ControlFlowDialect"];
}

def GpuDeviceBuffers : Pass<"fxmlir-gpu-device-buffers", "::mlir::func::FuncOp"> {
  let summary = "Put the host function's temporary buffers in device memory";
  let description = [{
    Bufferization allocates a kernel's temporaries (row statistics, ...) with
    `memref.alloc` in the host function, and copies between them with
    `memref.copy`: host memory and host loops, which kernels cannot use.
    This pass, run on the host functions after kernel outlining, makes them
    `gpu.alloc`, `gpu.dealloc` and `gpu.memcpy`, each in the async form that
    `gpu-to-llvm` lowers to the `mgpu*` runtime (its own `gpu.wait async`
    token, waited for right after: the runtime orders everything on one
    stream). Any other host op reading or writing memory fails the pass:
    the host cannot touch device buffers.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

#endif // FXMLIR_CODEGEN_PASSES_TD
