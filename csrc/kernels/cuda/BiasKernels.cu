//===- BiasKernels.cu - Torch-free CUDA kernels of the bias-add fusions ---===//

#include "BiasKernels.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <type_traits>

namespace fxmlir::kernels::cuda {
namespace {

constexpr int kThreads = 256;
// Enough blocks to fill any current GPU; larger inputs use the grid stride.
constexpr int64_t kMaxBlocks = 1 << 16;

template <typename T>
using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;

__device__ __forceinline__ float toAcc(float v) { return v; }
__device__ __forceinline__ double toAcc(double v) { return v; }
__device__ __forceinline__ float toAcc(__half v) { return __half2float(v); }
__device__ __forceinline__ float toAcc(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

template <typename T> __device__ __forceinline__ T fromAcc(Acc<T> v) {
  if constexpr (std::is_same_v<T, __half>)
    return __float2half_rn(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __float2bfloat16_rn(v);
  else
    return v;
}

__device__ __forceinline__ float erfAcc(float v) { return erff(v); }
__device__ __forceinline__ double erfAcc(double v) { return erf(v); }
__device__ __forceinline__ float expAcc(float v) { return expf(v); }
__device__ __forceinline__ double expAcc(double v) { return exp(v); }
__device__ __forceinline__ float tanhAcc(float v) { return tanhf(v); }
__device__ __forceinline__ double tanhAcc(double v) { return tanh(v); }

constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kTanhCubic = 0.044715;

template <bool Tanh, typename A> __device__ __forceinline__ A gelu(A v) {
  if constexpr (Tanh) {
    A inner = A(kSqrt2OverPi) * (v + A(kTanhCubic) * v * v * v);
    return A(0.5) * v * (A(1) + tanhAcc(inner));
  } else {
    return A(0.5) * v * (A(1) + erfAcc(v * A(kSqrt1_2)));
  }
}

template <bool Tanh, typename A>
__device__ __forceinline__ A geluDerivative(A v) {
  if constexpr (Tanh) {
    A inner = A(kSqrt2OverPi) * (v + A(kTanhCubic) * v * v * v);
    A t = tanhAcc(inner);
    A dInner = A(kSqrt2OverPi) * (A(1) + A(3 * kTanhCubic) * v * v);
    return A(0.5) * (A(1) + t) + A(0.5) * v * (A(1) - t * t) * dInner;
  } else {
    A cdf = A(0.5) * (A(1) + erfAcc(v * A(kSqrt1_2)));
    A pdf = A(kInvSqrt2Pi) * expAcc(A(-0.5) * v * v);
    return cdf + v * pdf;
  }
}

/// Vec consecutive elements, loaded and stored as one aligned access.
template <typename T, int Vec> struct alignas(sizeof(T) * Vec) Pack {
  T v[Vec];
};

template <int Vec, typename T>
__device__ __forceinline__ Pack<T, Vec> load(const T *p, int64_t i) {
  return *reinterpret_cast<const Pack<T, Vec> *>(p + i);
}

template <int Vec, typename T>
__device__ __forceinline__ void store(T *p, int64_t i,
                                      const Pack<T, Vec> &pack) {
  *reinterpret_cast<Pack<T, Vec> *>(p + i) = pack;
}

// Each op maps Vec elements starting at i, given their bias values.
template <typename T> struct BiasAddOp {
  const T *x;
  T *out;
  template <int Vec>
  __device__ void apply(int64_t i, const Acc<T> (&b)[Vec]) const {
    Pack<T, Vec> in = load<Vec>(x, i), res;
#pragma unroll
    for (int k = 0; k < Vec; ++k)
      res.v[k] = fromAcc<T>(toAcc(in.v[k]) + b[k]);
    store<Vec>(out, i, res);
  }
};

template <typename T, bool Tanh> struct BiasAddGeluOp {
  const T *x;
  T *out;
  template <int Vec>
  __device__ void apply(int64_t i, const Acc<T> (&b)[Vec]) const {
    Pack<T, Vec> in = load<Vec>(x, i), res;
#pragma unroll
    for (int k = 0; k < Vec; ++k)
      res.v[k] = fromAcc<T>(gelu<Tanh>(toAcc(in.v[k]) + b[k]));
    store<Vec>(out, i, res);
  }
};

template <typename T, bool Tanh> struct BiasAddGeluGradOp {
  const T *grad;
  const T *x;
  T *out;
  template <int Vec>
  __device__ void apply(int64_t i, const Acc<T> (&b)[Vec]) const {
    Pack<T, Vec> g = load<Vec>(grad, i), in = load<Vec>(x, i), res;
#pragma unroll
    for (int k = 0; k < Vec; ++k)
      res.v[k] = fromAcc<T>(toAcc(g.v[k]) *
                            geluDerivative<Tanh>(toAcc(in.v[k]) + b[k]));
    store<Vec>(out, i, res);
  }
};

template <typename T> struct BiasAddMaskScaleOp {
  const T *x;
  const bool *mask;
  T *out;
  Acc<T> scale;
  template <int Vec>
  __device__ void apply(int64_t i, const Acc<T> (&b)[Vec]) const {
    Pack<T, Vec> in = load<Vec>(x, i), res;
    Pack<bool, Vec> keep = load<Vec>(mask, i);
#pragma unroll
    for (int k = 0; k < Vec; ++k)
      // Multiplying by the mask (not selecting) keeps eager's inf * 0 = NaN.
      res.v[k] =
          fromAcc<T>((toAcc(in.v[k]) + b[k]) * Acc<T>(keep.v[k]) * scale);
    store<Vec>(out, i, res);
  }
};

/// The bias values of elements [i, i + Vec): one division per pack, then the
/// (column, bias index) pair is stepped.
template <int Vec, typename T, typename Index>
__device__ __forceinline__ void biasValues(const T *bias, Index i,
                                           Index axisSize, Index inner,
                                           Acc<T> (&b)[Vec]) {
  Index row = i / inner;
  Index col = i - row * inner;
  Index index = row % axisSize;
#pragma unroll
  for (int k = 0; k < Vec; ++k) {
    b[k] = toAcc(__ldg(bias + index));
    if (++col == inner) {
      col = 0;
      index = index + 1 == axisSize ? 0 : index + 1;
    }
  }
}

/// Packs of Vec elements over a grid stride; the numel % Vec tail elements go
/// to the first threads, one each.
template <int Vec, typename Index, typename T, typename Op>
__global__ void __launch_bounds__(kThreads)
    biasBroadcastKernel(Op op, const T *bias, Index numel, Index axisSize,
                        Index inner) {
  Index thread = blockIdx.x * Index(blockDim.x) + threadIdx.x;
  Index stride = Index(gridDim.x) * blockDim.x;
  Index packs = numel / Vec;
  for (Index p = thread; p < packs; p += stride) {
    Acc<T> b[Vec];
    biasValues<Vec>(bias, p * Vec, axisSize, inner, b);
    op.template apply<Vec>(p * Vec, b);
  }
  Index tail = packs * Vec + thread;
  if (tail < numel) {
    Acc<T> b[1];
    biasValues<1>(bias, tail, axisSize, inner, b);
    op.template apply<1>(tail, b);
  }
}

template <typename T> constexpr int kVec = 16 / sizeof(T);

bool aligned(const void *p, int bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

/// Whether every pointer allows the 16-byte pack accesses.
bool packAligned(std::initializer_list<const void *> pointers) {
  return std::all_of(pointers.begin(), pointers.end(),
                     [](const void *p) { return aligned(p, 16); });
}

template <int Vec, typename Index, typename T, typename Op>
void launchWith(Op op, const T *bias, BiasBroadcast shape,
                cudaStream_t stream) {
  int64_t packs = std::max<int64_t>(shape.numel / Vec, 1);
  int64_t blocks = std::min((packs + kThreads - 1) / kThreads, kMaxBlocks);
  biasBroadcastKernel<Vec, Index><<<blocks, kThreads, 0, stream>>>(
      op, bias, Index(shape.numel), Index(shape.axisSize), Index(shape.inner));
}

/// Packs when the pointers allow them, and 32-bit indexing when the sizes fit
/// (cheaper divisions).
template <typename T, typename Op>
cudaError_t launch(Op op, const T *bias, BiasBroadcast shape, bool vectorize,
                   cudaStream_t stream) {
  if (shape.numel == 0)
    return cudaSuccess;
  bool small = shape.numel <= INT32_MAX;
  if (vectorize && small)
    launchWith<kVec<T>, uint32_t>(op, bias, shape, stream);
  else if (vectorize)
    launchWith<kVec<T>, int64_t>(op, bias, shape, stream);
  else if (small)
    launchWith<1, uint32_t>(op, bias, shape, stream);
  else
    launchWith<1, int64_t>(op, bias, shape, stream);
  return cudaGetLastError();
}

} // namespace

template <typename T>
cudaError_t launchBiasAdd(const T *x, const T *bias, T *out,
                          BiasBroadcast shape, cudaStream_t stream) {
  return launch(BiasAddOp<T>{x, out}, bias, shape, packAligned({x, out}),
                stream);
}

template <typename T>
cudaError_t launchBiasAddGelu(const T *x, const T *bias, T *out,
                              BiasBroadcast shape, bool tanh,
                              cudaStream_t stream) {
  bool vectorize = packAligned({x, out});
  if (tanh)
    return launch(BiasAddGeluOp<T, true>{x, out}, bias, shape, vectorize,
                  stream);
  return launch(BiasAddGeluOp<T, false>{x, out}, bias, shape, vectorize,
                stream);
}

template <typename T>
cudaError_t launchBiasAddGeluGrad(const T *grad, const T *x, const T *bias,
                                  T *out, BiasBroadcast shape, bool tanh,
                                  cudaStream_t stream) {
  bool vectorize = packAligned({grad, x, out});
  if (tanh)
    return launch(BiasAddGeluGradOp<T, true>{grad, x, out}, bias, shape,
                  vectorize, stream);
  return launch(BiasAddGeluGradOp<T, false>{grad, x, out}, bias, shape,
                vectorize, stream);
}

template <typename T>
cudaError_t launchBiasAddMaskScale(const T *x, const T *bias, const bool *mask,
                                   T *out, BiasBroadcast shape, double scale,
                                   cudaStream_t stream) {
  BiasAddMaskScaleOp<T> op{x, mask, out, static_cast<Acc<T>>(scale)};
  // A mask pack holds kVec<T> one-byte bools.
  bool vectorize = packAligned({x, out}) && aligned(mask, kVec<T>);
  return launch(op, bias, shape, vectorize, stream);
}

#define FXMLIR_INSTANTIATE(T)                                                  \
  template cudaError_t launchBiasAdd<T>(const T *, const T *, T *,             \
                                        BiasBroadcast, cudaStream_t);          \
  template cudaError_t launchBiasAddGelu<T>(                                   \
      const T *, const T *, T *, BiasBroadcast, bool, cudaStream_t);           \
  template cudaError_t launchBiasAddGeluGrad<T>(const T *, const T *,          \
                                                const T *, T *, BiasBroadcast, \
                                                bool, cudaStream_t);           \
  template cudaError_t launchBiasAddMaskScale<T>(                              \
      const T *, const T *, const bool *, T *, BiasBroadcast, double,          \
      cudaStream_t);

FXMLIR_INSTANTIATE(float)
FXMLIR_INSTANTIATE(double)
FXMLIR_INSTANTIATE(__half)
FXMLIR_INSTANTIATE(__nv_bfloat16)
#undef FXMLIR_INSTANTIATE

} // namespace fxmlir::kernels::cuda
