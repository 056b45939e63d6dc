//===- LinearCrossEntropy.h - the linear-loss family's glue -----*- C++ -*-===//
//
// fused_linear_cross_entropy and its gradient, for every device at once:
// they are matrix products (the device's GEMM) and row reductions over
// blocks of vocabulary columns (the launcher's one-pass kernels; ATen ops
// where a bias or a logits' gradient joins them). A block's float32 logits,
// about 4 MiB, are the largest temporary: the [tokens, vocabulary] log-softmax
// and its gradient never exist. Blocks go over columns, not rows, so that
// each block writes its rows of grad_weight and grad_bias whole (no
// accumulation in the weight's dtype); grad_x, [M, K], is the only sum.
// A 16-bit x may come with a float32 weight (autocast's cast folded in by
// fxmlir-fuse-linear-cross-entropy): each block of it is cast as it is read,
// and grad_weight is float32, each block's 16-bit product cast into it.
// Its products are WideProducts.h's: float32 GEMMs for 16-bit types on CPUs
// without a fast 16-bit GEMM.
// Included by FusedOps.h, whose helpers (withLastSize) it uses.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_OPS_LINEARCROSSENTROPY_H
#define FXMLIR_OPS_LINEARCROSSENTROPY_H

#include "Device.h"
#include "ReusedBlocks.h"
#include "WideProducts.h"

#include "fxmlir/Support/LinearLossBlocks.h"

#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <tuple>
#include <vector>

namespace fxmlir::ops {

namespace linear_loss {

constexpr int64_t kMean = 1; // F.cross_entropy's reduction enum
constexpr int64_t kSum = 2;

/// Checks every tensor of the family (`logits`, `gradLogits`, `lse` and
/// `grad` where the op has them) with the op's name in each message.
inline void check(const char *op, const at::Tensor &x, const at::Tensor &weight,
                  const std::optional<at::Tensor> &bias,
                  const at::Tensor &target, int64_t reduction,
                  const std::optional<at::Tensor> &logits = std::nullopt,
                  const std::optional<at::Tensor> &gradLogits = std::nullopt,
                  const at::Tensor *lse = nullptr,
                  const at::Tensor *grad = nullptr) {
  TORCH_CHECK(reduction == kMean || reduction == kSum, op,
              ": reduction must be 1 (mean) or 2 (sum), got ", reduction);
  TORCH_CHECK(x.dim() >= 2, op, ": x must be [..., K] (2-D or more), got shape ",
              x.sym_sizes());
  at::ScalarType dtype = x.scalar_type();
  TORCH_CHECK(at::isFloatingType(dtype), op, ": x must be floating point, got ",
              dtype);
  TORCH_CHECK(weight.dim() == 2, op, ": weight must be 2-D [N, K], got shape ",
              weight.sym_sizes());
  TORCH_SYM_CHECK(weight.sym_size(1).sym_eq(x.sym_size(-1)), op,
                  ": weight has ", weight.sym_size(1),
                  " input features but x has ", x.sym_size(-1));
  auto same = [&](const char *name, const at::Tensor &t,
                  c10::SymIntArrayRef sizes, std::optional<at::ScalarType> type) {
    TORCH_CHECK(t.dim() == static_cast<int64_t>(sizes.size()), op, ": ", name,
                " shape ", t.sym_sizes(), " is not ", sizes);
    for (int64_t d = 0; d < t.dim(); ++d)
      TORCH_SYM_CHECK(t.sym_size(d).sym_eq(sizes[d]), op, ": ", name, " shape ",
                      t.sym_sizes(), " is not ", sizes);
    if (type)
      TORCH_CHECK(t.scalar_type() == *type, op, ": ", name, " must be ", *type,
                  ", got ", t.scalar_type());
    TORCH_CHECK(t.device() == x.device(), op, ": ", name, " is on ", t.device(),
                " but x is on ", x.device());
  };
  c10::SymInt rows = x.sym_numel() / x.sym_size(-1);
  c10::SymInt classes = weight.sym_size(0);
  bool wideWeight = weight.scalar_type() == at::kFloat &&
                    (dtype == at::kBFloat16 || dtype == at::kHalf);
  TORCH_CHECK(weight.scalar_type() == dtype || wideWeight, op,
              ": weight must be x's dtype (", dtype, ") or, for a 16-bit x, "
              "float32, got ", weight.scalar_type());
  same("weight", weight, weight.sym_sizes(), std::nullopt);
  if (bias)
    same("bias", *bias, {classes}, dtype);
  same("target", target, {rows}, std::nullopt);
  TORCH_CHECK(target.scalar_type() == at::kLong ||
                  target.scalar_type() == at::kInt,
              op, ": target must hold class indices (int64 or int32), got ",
              target.scalar_type());
  std::vector<c10::SymInt> byClasses = withLastSize(x, classes);
  if (logits)
    same("logits", *logits, byClasses, dtype);
  if (gradLogits)
    same("grad_logits", *gradLogits, byClasses, dtype);
  if (lse)
    same("lse", *lse, {rows}, at::kFloat);
  if (grad)
    same("grad", *grad, {}, at::kFloat);
}

/// Vocabulary columns per block: kLinearLossBlockElements float32 logits
/// for all rows, and never so few that the block's dozen kernels cost more
/// to launch than they compute. On a GPU each launch is several
/// microseconds of host time: with 256 columns, GPT-2's loss at 8 x 512
/// tokens took 197 blocks, and its bf16 step 162 ms on the H200 against
/// eager's 21 ms; with 2048 (25 blocks) its backward still took 5.9 ms of
/// host time a step under the profiler for 1.5 ms of GPU work. 8192
/// columns of 4096 rows are 128 MiB of float32 logits, a twelfth of eager's
/// [4096, 50257] bf16 logits and their float32 log-softmax.
/// A multiple of 8 columns, so that a block's rows start 16-byte aligned
/// in any 16- or 32-bit type (see logitsByBlocks).
inline int64_t blockColumns(int64_t rows, int64_t classes, bool onCpu) {
  int64_t minColumns = onCpu ? 256 : 8192;
  int64_t columns =
      kLinearLossBlockElements / std::max<int64_t>(rows, 1) / 8 * 8;
  return std::min(classes, std::max(columns, minColumns));
}

/// Whether a GPU computes the returned logits a block of columns at a time
/// rather than in one product: where a row of them does not start 16 bytes
/// after the last (GPT-2's 50257 columns), cuBLAS runs that product in an
/// sm75 kernel (H200, bf16, 4096 x 512 x 50257: 2.31 ms, 92 TFLOP/s); the
/// blocks (blockColumns) are aligned products, each copied into place.
inline bool logitsByBlocks(const at::Tensor &x, int64_t classes) {
  return x.is_cuda() && classes * x.element_size() % 16 != 0;
}

/// Rows [begin, begin + size) of the weight as the products read them: in
/// x's dtype (a float32 weight's block cast; the weight's own rows
/// otherwise), then as a product operand (WideProducts.h).
inline at::Tensor weightRows(const at::Tensor &weight, at::ScalarType dtype,
                             int64_t begin, int64_t size) {
  return productOperand(weight.narrow(0, begin, size).to(dtype));
}

/// The logits of columns [begin, begin + size), in x's dtype: a view of
/// `logits` when given (read only), else computed from `xOperand` (x's rows
/// as a product operand).
inline at::Tensor blockLogits(const at::Tensor &xOperand, at::ScalarType dtype,
                              const at::Tensor &weight,
                              const std::optional<at::Tensor> &bias,
                              const std::optional<at::Tensor> &logits,
                              int64_t begin, int64_t size) {
  if (logits)
    return logits->narrow(1, begin, size);
  at::Tensor w = weightRows(weight, dtype, begin, size).t();
  return bias ? product(xOperand, w, dtype, bias->narrow(0, begin, size))
              : product(xOperand, w, dtype);
}

/// x @ weight^T (+ bias), in x's dtype: one product where the weight is read
/// as it is, else a block of columns at a time (no cast of the whole weight,
/// to x's dtype or to float32 for widened products).
inline at::Tensor allLogits(const at::Tensor &x, const at::Tensor &xOperand,
                            const at::Tensor &weight,
                            const std::optional<at::Tensor> &bias, int64_t block) {
  at::ScalarType dtype = x.scalar_type();
  if (weight.scalar_type() == dtype && !widensProducts(x))
    return product(x, weight.t(), dtype, bias);
  int64_t classes = weight.size(0);
  at::Tensor logits = at::empty({x.size(0), classes}, x.options());
  for (int64_t begin = 0; begin < classes; begin += block) {
    int64_t size = std::min(block, classes - begin);
    at::Tensor out = logits.narrow(1, begin, size);
    at::Tensor w = weightRows(weight, dtype, begin, size).t();
    if (bias)
      productInto(out, xOperand, w, dtype, bias->narrow(0, begin, size));
    else
      productInto(out, xOperand, w, dtype);
  }
  return logits;
}

/// `z` itself when its columns are adjacent (the kernels' rows), else a
/// contiguous copy.
inline at::Tensor unitColumns(const at::Tensor &z) {
  return z.stride(1) == 1 ? z : z.contiguous();
}

/// Each row's target class, 0 for ignored rows (whose loss and gradient
/// are zeroed elsewhere), as int64 for gather and index_select.
inline at::Tensor safeTargets(const at::Tensor &target,
                              const at::Tensor &valid) {
  return at::where(valid, target, 0).to(at::kLong);
}

/// Each row's float32 target logit, from the returned logits or from one
/// dot product per row: each block no longer looks its targets up (ten
/// small kernels a block on a GPU). In x's dtype, as the product's own
/// logits round.
inline at::Tensor targetLogits(const at::Tensor &x, const at::Tensor &weight,
                               const std::optional<at::Tensor> &bias,
                               const std::optional<at::Tensor> &logits,
                               const at::Tensor &safeTarget) {
  if (logits)
    return logits->gather(1, safeTarget.unsqueeze(1)).squeeze(1).to(at::kFloat);
  int64_t rows = x.size(0);
  at::Tensor rowsW =
      weight.index_select(0, safeTarget).to(x.scalar_type()).unsqueeze(2);
  at::Tensor dot =
      bias ? at::baddbmm(bias->index_select(0, safeTarget).view({rows, 1, 1}),
                         x.unsqueeze(1), rowsW)
           : at::bmm(x.unsqueeze(1), rowsW);
  return dot.view({rows}).to(at::kFloat);
}

/// Fails on a target outside [0, N) that is not ignored, as eager's
/// cross-entropy does: on the CPU at once, elsewhere by a device-side
/// assertion (no synchronization, CUDA graphs can capture it).
inline void checkTargets(const char *op, const at::Tensor &target,
                         const at::Tensor &valid, int64_t classes) {
  at::Tensor bad = valid & (target.lt(0) | target.ge(classes));
  if (!target.is_cpu()) {
    at::_assert_async(bad.any().logical_not(),
                      "fused_linear_cross_entropy: a target is out of bounds");
    return;
  }
  TORCH_CHECK(!bad.any().item<bool>(), op,
              ": a target is out of bounds: not in [0, ", classes,
              ") and not ignore_index");
}

} // namespace linear_loss

template <Device D>
std::tuple<at::Tensor, at::Tensor, at::Tensor>
fusedLinearCrossEntropy(const at::Tensor &x, const at::Tensor &weight,
                        const std::optional<at::Tensor> &bias,
                        const at::Tensor &target, int64_t reduction,
                        int64_t ignoreIndex, bool returnLogits) {
  namespace ll = linear_loss;
  constexpr const char *op = "fused_linear_cross_entropy";
  ll::check(op, x, weight, bias, target, reduction);
  at::TensorOptions floats = x.options().dtype(at::kFloat);
  if constexpr (D == Device::Meta) {
    at::Tensor logits =
        returnLogits
            ? at::empty_symint(withLastSize(x, weight.sym_size(0)), x.options())
            : at::empty({0}, x.options());
    return {at::empty({}, floats),
            at::empty_symint({x.sym_numel() / x.sym_size(-1)}, floats),
            logits};
  } else {
    c10::OptionalDeviceGuard guard(x.device());
    at::Tensor rowsX = x.reshape({-1, x.size(-1)});
    int64_t rows = rowsX.size(0), classes = weight.size(0);
    at::Tensor valid = target.ne(ignoreIndex);
    ll::checkTargets(op, target, valid, classes);
    int64_t block = ll::blockColumns(rows, classes, D == Device::CPU);
    // Returned logits are computed once and read by the blocks below;
    // otherwise each block computes its own.
    // x's rows as the products read them (a float32 copy where they widen),
    // released after their last product.
    at::Tensor xOperand = productOperand(rowsX);
    std::optional<at::Tensor> logits;
    at::Tensor filled; // returned logits the blocks below fill
    if (returnLogits && ll::logitsByBlocks(x, classes)) {
      filled = at::empty({rows, classes}, x.options());
    } else if (returnLogits) {
      logits = ll::allLogits(rowsX, xOperand, weight, bias, block);
      xOperand.reset();
    }
    // The rows' log-sum-exp, online over blocks: running max and sum.
    at::Tensor max =
        at::full({rows}, -std::numeric_limits<float>::infinity(), floats);
    at::Tensor sum = at::zeros({rows}, floats);
    for (int64_t begin = 0; begin < classes; begin += block) {
      int64_t size = std::min(block, classes - begin);
      at::Tensor z = ll::blockLogits(xOperand, x.scalar_type(), weight, bias,
                                     logits, begin, size);
      if (filled.defined())
        filled.narrow(1, begin, size).copy_(z);
      // One kernel reads the block once (the ATen ops took five passes).
      Launcher<D>::logSumExpBlock(ll::unitColumns(z), max, sum);
    }
    xOperand.reset();
    if (filled.defined())
      logits = filled;
    at::Tensor lse = max.add_(sum.log_());
    at::Tensor picked = ll::targetLogits(rowsX, weight, bias, logits,
                                         ll::safeTargets(target, valid));
    at::Tensor loss = at::where(valid, lse - picked, 0).sum();
    if (reduction == ll::kMean)
      loss.div_(valid.sum()); // no row left: NaN, as eager's mean
    at::Tensor returned =
        logits ? logits->view_symint(withLastSize(x, weight.sym_size(0)))
               : at::empty({0}, x.options());
    return {loss, lse, returned};
  }
}

template <Device D>
std::tuple<at::Tensor, at::Tensor, at::Tensor> fusedLinearCrossEntropyGrad(
    const at::Tensor &grad, const std::optional<at::Tensor> &gradLogits,
    const at::Tensor &x, const at::Tensor &weight,
    const std::optional<at::Tensor> &bias, const at::Tensor &target,
    const std::optional<at::Tensor> &logits, const at::Tensor &lse,
    int64_t reduction, int64_t ignoreIndex) {
  namespace ll = linear_loss;
  constexpr const char *op = "fused_linear_cross_entropy_grad";
  ll::check(op, x, weight, bias, target, reduction, logits, gradLogits, &lse,
            &grad);
  at::Tensor gradBias = at::empty_symint({weight.sym_size(0)}, x.options());
  if constexpr (D == Device::Meta) {
    at::Tensor gradWeight = at::empty_like(weight, at::MemoryFormat::Contiguous);
    return {at::empty_like(x, at::MemoryFormat::Contiguous), gradWeight,
            gradBias};
  } else {
    c10::OptionalDeviceGuard guard(x.device());
    // Made again each step, 62.5 MiB for a 32000 x 512 head: reused.
    at::Tensor gradWeight = emptyReused(weight.sizes(), weight.options());
    at::Tensor rowsX = x.reshape({-1, x.size(-1)});
    int64_t rows = rowsX.size(0), classes = weight.size(0);
    auto asRows = [&](const std::optional<at::Tensor> &t) {
      return t ? std::optional<at::Tensor>(t->reshape({rows, classes}))
               : std::nullopt;
    };
    std::optional<at::Tensor> rowsLogits = asRows(logits);
    std::optional<at::Tensor> rowsGradLogits = asRows(gradLogits);
    at::TensorOptions floats = x.options().dtype(at::kFloat);
    at::Tensor valid = target.ne(ignoreIndex);
    // d loss / d logit = (softmax - one_hot) * rowScale; ignored rows: 0
    // (not 0 * inf when the mean has no row left), as eager's.
    at::Tensor scale = grad.to(at::kFloat);
    if (reduction == ll::kMean)
      scale = scale / valid.sum();
    at::Tensor rowScale = at::where(valid, scale, 0).unsqueeze(1);
    at::Tensor negRowScale = rowScale.neg();
    at::Tensor safeTarget = ll::safeTargets(target, valid).unsqueeze(1);
    // grad_x sums over blocks: in float32 unless x is.
    at::Tensor gradX = at::zeros({rows, rowsX.size(1)}, floats);
    if (!bias)
      gradBias.zero_();
    int64_t block = ll::blockColumns(rows, classes, D == Device::CPU);
    // Without a bias or a logits' gradient, one kernel makes each block's
    // gradient from its logits in their dtype, in one pass (the ATen ops
    // below take six: casts, exp, scale, scatter).
    bool onePass = !bias && !rowsGradLogits;
    at::Tensor flatScale = rowScale.squeeze(1).contiguous();
    at::Tensor flatTarget = safeTarget.squeeze(1).contiguous();
    at::ScalarType dtype = x.scalar_type();
    at::Tensor xOperand = productOperand(rowsX);
    for (int64_t begin = 0; begin < classes; begin += block) {
      int64_t size = std::min(block, classes - begin);
      at::Tensor w = ll::weightRows(weight, dtype, begin, size);
      at::Tensor g, p;
      if (onePass) {
        at::Tensor z = rowsLogits ? ll::unitColumns(
                                        rowsLogits->narrow(1, begin, size))
                                  : product(xOperand, w.t(), dtype);
        g = at::empty({rows, size}, x.options());
        Launcher<D>::softmaxGradBlock(z, lse, flatScale, flatTarget, begin, g);
      } else {
        at::Tensor z = ll::blockLogits(xOperand, dtype, weight, bias,
                                       rowsLogits, begin, size)
                           .to(at::kFloat);
        // The softmax, in one new block (z may be a view of the logits),
        // scaled, less the scale at each target in the block (ignored rows
        // have a scale of 0).
        p = (z - lse.unsqueeze(1)).exp_().mul_(rowScale);
        at::Tensor local = safeTarget - begin;
        at::Tensor column = local.clamp(0, size - 1);
        p.scatter_add_(1, column,
                       at::where(column.eq(local), negRowScale, 0));
        if (rowsGradLogits)
          p.add_(rowsGradLogits->narrow(1, begin, size));
        g = p.to(dtype);
      }
      at::Tensor gOperand = productOperand(g);
      if (dtype == at::kFloat)
        gradX.addmm_(g, w);
      else
        gradX.add_(product(gOperand, w, dtype));
      // Its float32 block (where products widen) is not held through the
      // gradient rows' product.
      w.reset();
      // A float32 weight's gradient rows take the block's 16-bit product, as
      // autocast's cast of it.
      at::Tensor gradWeightRows = gradWeight.narrow(0, begin, size);
      productInto(gradWeightRows, gOperand.t(), xOperand, dtype);
      if (bias)
        gradBias.narrow(0, begin, size).copy_(p.sum(0));
    }
    return {gradX.to(x.scalar_type()).view(x.sizes()), gradWeight, gradBias};
  }
}

} // namespace fxmlir::ops

#endif // FXMLIR_OPS_LINEARCROSSENTROPY_H
