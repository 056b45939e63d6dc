//===- EmbeddingGrad.h - an embedding's weight gradient ---------*- C++ -*-===//
//
// embedding_grad: ATen's embedding_dense_backward (without
// scale_grad_by_freq) into a block from ReusedBlocks.h. ATen's takes a fresh
// zero-filled [num_weights, D] block each step, which glibc maps anew for
// a large vocabulary (62.5 MiB for LLaMA's 32000 x 512 in float32) and
// whose pages then fault in one at a time; here a freed gradient's block
// is zeroed in place. The sums are ATen's, in its order: each thread owns
// a range of weight rows, zeroes it, and adds into it, in index order, the
// gradient rows whose index falls there, each add rounded to the dtype as
// ATen's `grad_weight[k].add_(grad[i])` rounds it.
// Included by FusedOps.h.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_OPS_EMBEDDINGGRAD_H
#define FXMLIR_OPS_EMBEDDINGGRAD_H

#include "Device.h"
#include "ReusedBlocks.h"

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>

#include <algorithm>

namespace fxmlir::ops {

namespace embedding_grad {

/// Adds `dim` elements of `from` into `into`, each sum rounded to T.
template <typename T>
inline void addRow(T *__restrict into, const T *__restrict from, int64_t dim) {
  using Acc = at::opmath_type<T>;
#pragma omp simd
  for (int64_t j = 0; j < dim; ++j)
    into[j] = static_cast<T>(static_cast<Acc>(into[j]) +
                             static_cast<Acc>(from[j]));
}

/// Rows [begin, end) of `out` ([*, dim]): zeros plus the rows of `grad`
/// whose index falls there, in index order.
template <typename T, typename Index>
void sumRows(T *out, const T *grad, const Index *indices, int64_t count,
             int64_t dim, int64_t paddingIdx, int64_t begin, int64_t end) {
  std::fill(out + begin * dim, out + end * dim, T(0));
  for (int64_t i = 0; i < count; ++i) {
    int64_t k = indices[i];
    if (k != paddingIdx && k >= begin && k < end)
      addRow(out + k * dim, grad + i * dim, dim);
  }
}

} // namespace embedding_grad

template <Device D>
at::Tensor embeddingGrad(const at::Tensor &grad, const at::Tensor &indices,
                         int64_t numWeights, int64_t paddingIdx) {
  constexpr const char *op = "embedding_grad";
  TORCH_CHECK(grad.dim() >= 1 && at::isFloatingType(grad.scalar_type()), op,
              ": grad must be a floating-point [..., D] tensor, got ",
              grad.scalar_type(), " of shape ", grad.sym_sizes());
  TORCH_CHECK(indices.scalar_type() == at::kLong ||
                  indices.scalar_type() == at::kInt,
              op, ": indices must be int64 or int32, got ",
              indices.scalar_type());
  TORCH_CHECK(indices.sym_sizes() ==
                  grad.sym_sizes().slice(0, grad.dim() - 1),
              op, ": indices of shape ", indices.sym_sizes(),
              " must have grad's leading dims (grad: ", grad.sym_sizes(), ")");
  TORCH_CHECK(indices.device() == grad.device(), op,
              ": indices and grad must be on one device, got ",
              indices.device(), " and ", grad.device());
  TORCH_CHECK(numWeights >= 0, op, ": num_weights must be at least 0, got ",
              numWeights);
  if constexpr (D == Device::Meta) {
    return at::empty_symint({c10::SymInt(numWeights), grad.sym_size(-1)},
                            grad.options());
  } else {
    static_assert(D == Device::CPU, "embedding_grad has a CPU kernel only");
    int64_t dim = grad.size(-1);
    at::Tensor rows = grad.contiguous();
    at::Tensor index = indices.contiguous();
    at::Tensor out = emptyReused({numWeights, dim}, grad.options());
    int64_t count = index.numel();
    AT_DISPATCH_INDEX_TYPES(index.scalar_type(), op, [&] {
      const index_t *ids = index.const_data_ptr<index_t>();
      for (int64_t i = 0; i < count; ++i)
        TORCH_CHECK(ids[i] == paddingIdx || (ids[i] >= 0 && ids[i] < numWeights),
                    op, ": index ", ids[i], " at position ", i,
                    " is out of range for ", numWeights, " weights");
      AT_DISPATCH_FLOATING_TYPES_AND2(
          at::kBFloat16, at::kHalf, rows.scalar_type(), op, [&] {
            scalar_t *to = out.mutable_data_ptr<scalar_t>();
            const scalar_t *from = rows.const_data_ptr<scalar_t>();
            // At least 32 Ki elements of the result a task.
            int64_t grain = std::max<int64_t>(1, (int64_t{1} << 15) /
                                                     std::max<int64_t>(dim, 1));
            at::parallel_for(0, numWeights, grain,
                             [&](int64_t begin, int64_t end) {
                               embedding_grad::sumRows(to, from, ids, count,
                                                       dim, paddingIdx, begin,
                                                       end);
                             });
          });
    });
    return out;
  }
}

} // namespace fxmlir::ops

#endif // FXMLIR_OPS_EMBEDDINGGRAD_H
