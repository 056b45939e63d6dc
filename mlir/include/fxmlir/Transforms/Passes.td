//===- Passes.td - fxmlir graph passes ---------------------*- tablegen -*-===//
//
// The fxmlir graph passes. Which stages run them, and in what order, is
// declared once, in lib/Registration/PassRegistry.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_TRANSFORMS_PASSES_TD
#define FXMLIR_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def RecognizeGelu : Pass<"fxmlir-recognize-gelu"> {
  let summary = "Rewrite GELU written out as a formula (tanh or erf form) to aten.gelu";
  let description = [{
    `0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))` -> `gelu(x,
    approximate="tanh")` and `0.5 * x * (1 + erf(x / sqrt(2)))` -> `gelu(x)`,
    whatever the order of the products and however the cube is spelled
    (`pow(x, 3)`, `x * x * x`, `x * (1 + 0.044715 * x * x)`), with constants
    to float precision; and `to(gelu(to(y, f32)), y's type)` with a 16-bit
    float y -> `gelu(y)`. GELU then fuses with its bias like `nn.GELU`. All
    values of the formula have x's type: a formula computed in another
    dtype or broadcast is left alone.
  }];
  let dependentDialects = ["::fxmlir::FxmlirDialect"];
}

def ApproximateGelu : Pass<"fxmlir-approximate-gelu"> {
  let summary = "Compute erf GELU as its tanh approximation (opt-in: changes numerics)";
  let description = [{
    `gelu(x)` -> `gelu(x, approximate="tanh")`, and `gelu_backward` alike.
    The tanh form differs from erf GELU by up to ~5e-4 (absolute, near
    |x| = 2), below bfloat16 resolution at that size but not float32's.
    It is what cuBLASLt's GELU epilogue computes: with this pass, an erf
    GELU after a linear layer on CUDA becomes one matmul
    (`fxmlir-fuse-gemm-epilogues`). Not in any default pipeline: select it with
    `FXMLIR_PASSES=+fxmlir-approximate-gelu` or `passes="+fxmlir-approximate-gelu"`.
  }];
  let dependentDialects = ["::fxmlir::FxmlirDialect"];
}

def FuseLinearCrossEntropy : Pass<"fxmlir-fuse-linear-cross-entropy"> {
  let summary = "Fuse a language model's output projection and its cross-entropy loss into one op that never holds the [tokens, vocabulary] log-softmax";
  let description = [{
    Before autodiff: `cross_entropy_loss(L, target)` where L is a linear
    layer's output `linear(x, w, b)` (bias or none, tied or untied weight)
    through views to rows and float casts, as transformers' causal-LM
    (`logits.float()`, shifted labels) and masked-LM losses and
    `F.cross_entropy` spell it, with no class weights, no label smoothing,
    mean or sum reduction and any `ignore_index` ->
    `fused_linear_cross_entropy(view(x, [-1, K]), w, b, target, logits)`.
    The op's autograd formula saves the rows' log-sum-exp, not the
    log-softmax, and its gradient works a block of vocabulary columns at a
    time: neither the log-softmax nor the logits' gradient ever exists.
    `logits` is the layer's output as rows when the graph uses it elsewhere
    (a model that returns its logits), read instead of recomputed; else
    none, and the op computes the logits block by block. Before
    `fxmlir-decompose`, which would split the layer's bias off.
  }];
  let dependentDialects = ["::fxmlir::FxmlirDialect"];
}

def Decompose : Pass<"fxmlir-decompose"> {
  let summary = "Rewrite linear layers into one canonical bias_add form for fusion";
  let description = [{
    PyTorch spells a linear layer's bias add many ways: `addmm(b, x, wT)`,
    `linear(x, w, b)`, a broadcast `add(x, b)`, often followed by a `view`
    that restores leading dims. This pass rewrites them to `mm`/`linear` +
    `fxmlir.bias_add` along an explicit axis and moves a single-use bias_add
    below a view that keeps the last dim, so fusion patterns match one form.
    `fxmlir-recompose` undoes what no fusion used.
  }];
  let dependentDialects = ["::fxmlir::FxmlirDialect"];
}

def FuseGemmEpilogues : Pass<"fxmlir-fuse-gemm-epilogues"> {
  let summary = "Fold a CUDA linear layer's bias, tanh GELU and their gradients into cuBLASLt matmul epilogues";
  let description = [{
    For f32/f16/bf16 CUDA tensors whose intermediate values have no other
    use:
    - `gelu(bias_add(linear(x, w, none), b), approximate="tanh")` ->
      `fused_linear_gelu(x, w, b)`, and likewise for the `mm(x, m)` and
      `view(mm(x, m))` spellings (w = t(m)): one matmul with the
      GELU_AUX_BIAS epilogue, keeping the pre-activation for backward;
    - `fused_linear_gelu_grad(view(mm(a, b)), ...)` ->
      `fused_linear_gelu_grad_mm(a, b, ...)`: the GELU and bias gradients in
      the epilogue (DGELU_BGRAD) of the product that makes the gradient;
    - `mm(t(g), x)` and `sum(g, [0])` -> `linear_weight_bias_grad(g, x)`: a
      linear layer's bias gradient in the epilogue (BGRADB) of its weight
      gradient.
    cuBLASLt's GELU is the tanh form: erf GELU is left to
    `fxmlir-fuse-bias-add-activation` (see `fxmlir-approximate-gelu`). On
    CPU, where no matmul has such epilogues, nothing changes.
  }];
  let dependentDialects = ["::fxmlir::FxmlirDialect"];
}

def FuseBiasAddActivation : Pass<"fxmlir-fuse-bias-add-activation"> {
  let summary = "Fuse bias_add + an activation (and its backward of a bias_add) into one kernel";
  let description = [{
    `gelu(bias_add(x, b))` -> `fused_bias_act(x, b, activation = "gelu")`
    (`"gelu_tanh"` for approximate = "tanh"), likewise for `relu` and
    `silu`, and `gelu_backward(g, bias_add(x, b))` -> `fused_bias_act_grad(g,
    x, b, activation = "gelu")` (and `silu_backward`), for f32/f16/bf16
    tensors on CPU or CUDA whose bias_add has no other use. The activations
    are the rows of ACTIVATIONS in python/fxmlir/fused_ops.py.
  }];
  let dependentDialects = ["::fxmlir::FxmlirDialect"];
}

def FuseBiasAddDropout : Pass<"fxmlir-fuse-bias-add-dropout"> {
  let summary = "The seed's bias_add + dropout rewrite: draw the mask, apply bias, mask and scale in one kernel";
  let description = [{
    OneFlow's DRR pattern: a training dropout of a `bias_add` used only by
    it, `dropout(bias_add(x, b), p, train)` before autodiff, ->
    `fused_bias_add_mask_scale(x, b, random_mask_like(x, p), scale =
    1 / (1 - p))`; after autodiff `native_dropout(bias_add(x, b))` alike,
    the drawn mask replacing its mask result (the backward graph reads
    it). p = 0 and eval mode are not dropout and are left alone.
    `fxmlir-fuse-mask-draws` then merges the draw into the kernel.
  }];
  let dependentDialects = ["::fxmlir::FxmlirDialect"];
}

def FuseMaskDraws : Pass<"fxmlir-fuse-mask-draws"> {
  let summary = "Draw a dropout's mask inside its kernel, with a residual add: fused_bias_dropout_add";
  let description = [{
    `fused_bias_add_mask_scale(x, b, random_mask_like(x, p))` whose scale is
    1 / (1 - p), and the residual add of its output if any ->
    `fused_bias_dropout_add(x, b, residual or none)`, one kernel that draws
    the mask as it applies it. A draw read only by its scale (before
    autodiff) is saved packed at 1 bit per element (`packed = true`: the
    fused op's autograd formula reads it); a draw the backward graph reads
    too stays a bool mask, a result of the fused op. A dropout of a
    `fused_bias_act` (run fxmlir-fuse-bias-add-activation first) has no
    two-kernel form and becomes `fused_bias_dropout_add` with its
    `activation` here, before and after autodiff.
  }];
  let dependentDialects = ["::fxmlir::FxmlirDialect"];
}

def Recompose : Pass<"fxmlir-recompose"> {
  let summary = "Fold bias_adds that no fusion used back into addmm, linear or add";
  let description = [{
    The inverse of `fxmlir-decompose` for what is left unfused, so that a
    decomposition that enabled no fusion costs nothing at run time.
  }];
  let dependentDialects = ["::fxmlir::FxmlirDialect"];
}

def FoldTransposePairs : Pass<"fxmlir-fold-transpose-pairs"> {
  let summary = "Fold a transpose of a transpose (t(t(x))) into the tensor itself";
  let description = [{
    AOTAutograd's graphs save t(t(w)) of a linear layer's weight and return
    t(t(mm)) as its gradient: two op calls a layer, and a detach per saved
    view, each step. The pair is x itself (same sizes, strides, storage).
  }];
  let dependentDialects = ["::fxmlir::FxmlirDialect"];
}

def GroupCasts : Pass<"fxmlir-group-casts"> {
  let summary = "Cast a graph's inputs to each dtype in one fxmlir.cast_tensors";
  let description = [{
    Autocast's casts of the weights (and biases) a forward graph multiplies
    are an op call and a kernel launch each, host work a GPU step waits on.
    The casts that only change the floating-point dtype of a CUDA graph
    input become one
    `fxmlir.cast_tensors` per dtype and device (where there are two or
    more), just before the first of them, where that costs no memory at the
    peak: the graph keeps the cast to its end anyway (returns it, as a
    forward graph saves its weights for backward, or a view of it), or it
    is a vector. CPU casts stay beside their products, which read them
    while they are in cache. JIT regions' bodies (private functions) are
    left as they are. After autodiff only: the op has no autograd formula.
  }];
  let dependentDialects = ["::fxmlir::FxmlirDialect"];
}

def ReuseEmbeddingGrads : Pass<"fxmlir-reuse-embedding-grads"> {
  let summary = "Compute CPU embedding gradients into a block reused across steps (fxmlir.embedding_grad)";
  let description = [{
    `embedding_dense_backward` of CPU tensors without `scale_grad_by_freq`
    -> `fxmlir.embedding_grad`: the same sums in the same order, into the
    block the step before's freed gradient left (csrc/ops/ReusedBlocks.h),
    zeroed in place, where ATen's takes a fresh zero-filled block, which
    glibc maps anew for a large vocabulary (LLaMA's [32000, 512] float32:
    62.5 MiB, its pages faulted in one at a time each step). After
    autodiff only: the op has no autograd formula.
  }];
  let dependentDialects = ["::fxmlir::FxmlirDialect"];
}

def WidenCpuProducts : Pass<"fxmlir-widen-cpu-products"> {
  let summary = "Compute 16-bit float products on CPU as float32 GEMMs where the CPU has no fast 16-bit GEMM, and small ones everywhere";
  let description = [{
    `mm`, `bmm` and `addmm` of CPU tensors of a listed 16-bit type (`dtypes`:
    "bf16", "f16") -> the same op on float32 casts of its operands, its
    result cast back: `to(mm(to(a, f32), to(b, f32)), bf16)`. Where ATen
    has no oneDNN GEMM for the type (x86 without AVX-512, e.g. AMD Zen 3),
    its 16-bit products are ~50x slower than float32 ones (a [256, 512] x
    [512, 512] bf16 mm: 105 ms against 1.9 ms). The result is the same
    kind of number: a 16-bit GEMM also sums exact products in float32 and
    rounds once; only the order of the sums may differ. Flash attention's
    CPU backward (`_scaled_dot_product_flash_attention_for_cpu_backward`)
    makes its products in the 16-bit type as well, and is widened alike:
    its 16-bit operands cast, the float32 log-sum-exp as it is, its
    gradients cast back (rounded once, not after each inner product:
    nearer a float64 reference, and 27.4 ms against 6.0 for [2, 8, 128,
    64] causal bf16, one AMD EPYC thread); not with an attention mask, whose
    float32 copy would take the step's peak above eager's. Whatever the
    types, a product of static shapes with at most 2^17 multiply-adds is
    widened too: below ~500 000, oneDNN's 16-bit GEMM costs ~15 us a call,
    a float32 one with its casts less (a [32, 64] x [64, 32] bf16 mm: 15.1
    us against 8.1, one AMD EPYC Zen 4 thread). Each value is cast once,
    however many ops read it. The round trip lists the types this machine
    needs (python/fxmlir/cpu_products.py): none where oneDNN has the GEMM,
    and then only small products are widened. After autodiff only: autograd
    never sees the casts.
  }];
  let options = [
    ListOption<"dtypes", "dtypes", "std::string",
               "The 16-bit element types whose products are widened "
               "(\"bf16\", \"f16\"); none when empty">,
  ];
  let dependentDialects = ["::fxmlir::FxmlirDialect"];
}

def EagerRandom : Pass<"fxmlir-eager-random"> {
  let summary = "Fused random ops draw eager's dropout masks (opt-in: one more pass per dropout)";
  let description = [{
    Sets `eager_random = true` on every fused op that draws random numbers
    (`fused_bias_dropout_add`, `random_mask_like`): their kernels then draw
    the keep mask by eager's own ATen calls (CPU: `bernoulli_`, CUDA:
    `native_dropout`), so that a run seeded with `torch.manual_seed` gives
    eager's masks, losses and gradients, and leaves torch's generator where
    eager leaves it. The fusion stays: the fused kernel applies the drawn
    mask. The `eager_random` option (FXMLIR_EAGER_RANDOM) runs it after
    each stage's pipeline.
  }];
  let dependentDialects = ["::fxmlir::FxmlirDialect"];
}

def OutlineJitRegions : Pass<"fxmlir-outline-jit-regions", "::mlir::ModuleOp"> {
  let summary = "Outline maximal regions of lowerable ops into functions called by fxmlir.mlir_jit";
  let description = [{
    Groups the ops that `fxmlir-convert-to-linalg` can lower (elementwise
    arithmetic, casts, comparisons, where/masked_fill, activations and their
    gradients, and reductions over the last dim, including softmax and layer
    norm forward and backward) into maximal regions connected by def-use
    edges, never through an op outside the region (no cycles). Each region
    with at least `min-ops` ops that compute something becomes a private
    `func.func` named after the ops it holds, and one `fxmlir.mlir_jit` op
    calling it; region values used elsewhere become its results. GEMMs, the
    hand-written fused ops, calls of unknown ops and unsupported element
    types (complex, float8) stay outside. A region never mixes devices.

    Runs after autodiff, on functional graphs: ops that consume region results
    may move below the `fxmlir.mlir_jit` op.
  }];
  let options = [
    Option<"minOps", "min-ops", "unsigned", /*default=*/"2",
           "Outline only regions with at least this many ops that compute "
           "(detach/alias not counted): one op alone fuses nothing and its "
           "torch kernel is already as good">,
    Option<"costModel", "cost-model", "bool", /*default=*/"false",
           "Outline only regions that move fewer bytes than the eager "
           "kernels they replace, counting a call's overhead and the JIT's "
           "slower row reductions (RegionCost.h)">,
    ListOption<"deviceTypes", "device-types", "std::string",
               "Outline only ops on these device types (\"cpu\", \"cuda\"; "
               "all that lower when empty): those mlir_jit has kernels for">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Mark each op left out of the regions with why, in a "
           "`fxmlir.left_out` string attribute (for fxmlir explain): a lone "
           "op, a region below min-ops, a region the cost model refused "
           "(with its bytes), or an op the JIT cannot lower between ops in "
           "regions">,
  ];
  let dependentDialects = ["::fxmlir::FxmlirDialect",
                           "::mlir::func::FuncDialect"];
}

#endif // FXMLIR_TRANSFORMS_PASSES_TD
