//===- CastKernel.cuh - several tensors cast in one launch ----------------===//
//
// cast_tensors on CUDA: up to kCastBatch dense tensors of one source and one
// destination type, each a range of blocks of one grid, so that a step's
// weight casts are one launch instead of one each (their host work, not
// their bytes, is what a step waits on). A block finds its tensor among the
// batch's block offsets and casts kCastElementsPerBlock elements, its
// threads striding so that each warp's accesses are contiguous. Torch-free;
// instantiated by the CUDA launcher.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_CUDA_CASTKERNEL_CUH
#define FXMLIR_KERNELS_CUDA_CASTKERNEL_CUH

#include "../common/ElementTypes.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace fxmlir::kernels::cuda {

/// Tensors a launch takes: the batch is a kernel parameter (under 1.1 KB).
constexpr int kCastBatch = 32;
constexpr int kCastThreads = 256;
constexpr int64_t kCastElementsPerBlock = 8 * kCastThreads;

struct CastBatch {
  const void *from[kCastBatch];
  void *to[kCastBatch];
  int64_t numel[kCastBatch];
  /// Tensor i is cast by blocks [firstBlock[i], firstBlock[i + 1]).
  int64_t firstBlock[kCastBatch + 1] = {};
  int count = 0;
};

template <typename From, typename To>
__global__ void __launch_bounds__(kCastThreads)
    castBatchKernel(CastBatch batch) {
  int64_t block = blockIdx.x;
  int tensor = 0;
  while (block >= batch.firstBlock[tensor + 1])
    ++tensor;
  const From *from = static_cast<const From *>(batch.from[tensor]);
  To *to = static_cast<To *>(batch.to[tensor]);
  int64_t begin = (block - batch.firstBlock[tensor]) * kCastElementsPerBlock;
  int64_t end = begin + kCastElementsPerBlock < batch.numel[tensor]
                    ? begin + kCastElementsPerBlock
                    : batch.numel[tensor];
  for (int64_t i = begin + threadIdx.x; i < end; i += kCastThreads)
    to[i] = fromAcc<To>(toAcc(from[i]));
}

/// Appends a tensor of `numel` elements to `batch` (count < kCastBatch).
inline void addToBatch(CastBatch &batch, const void *from, void *to,
                       int64_t numel) {
  int i = batch.count++;
  batch.from[i] = from;
  batch.to[i] = to;
  batch.numel[i] = numel;
  batch.firstBlock[i + 1] =
      batch.firstBlock[i] +
      (numel + kCastElementsPerBlock - 1) / kCastElementsPerBlock;
}

/// Casts the batch's tensors (none empty) in one launch.
template <typename From, typename To>
cudaError_t launchCastBatch(const CastBatch &batch, cudaStream_t stream) {
  int64_t blocks = batch.firstBlock[batch.count];
  if (blocks == 0)
    return cudaSuccess;
  castBatchKernel<From, To>
      <<<static_cast<unsigned>(blocks), kCastThreads, 0, stream>>>(batch);
  return cudaGetLastError();
}

} // namespace fxmlir::kernels::cuda

#endif // FXMLIR_KERNELS_CUDA_CASTKERNEL_CUH
