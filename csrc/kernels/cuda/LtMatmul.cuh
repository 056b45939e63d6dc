//===- LtMatmul.cuh - cuBLASLt matmuls with epilogues ---------------------===//
//
// One cublasLtMatmul call with an epilogue: the GELU of a linear layer with
// its bias and pre-activation (GELU_AUX_BIAS), a weight gradient with its
// bias gradient (BGRADB). Torch-free: the caller passes cuBLASLt's handle,
// the workspace and the stream (the glue takes torch's), and falls back to
// unfused ops where cuBLASLt has no algorithm. Matrices are column-major, as
// cuBLASLt sees them: a row-major [rows, cols] tensor is a column-major
// cols x rows matrix.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_CUDA_LTMATMUL_CUH
#define FXMLIR_KERNELS_CUDA_LTMATMUL_CUH

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <type_traits>

namespace fxmlir::kernels::cuda {

struct LtContext {
  cublasLtHandle_t handle;
  cudaStream_t stream;
  void *workspace;
  size_t workspaceSize;
};

/// A column-major operand: a rows x cols matrix in memory with leading
/// dimension ld, used as is or transposed.
struct LtOperand {
  const void *data;
  uint64_t rows;
  uint64_t cols;
  int64_t ld;
  bool transposed;
};

struct LtEpilogue {
  cublasLtEpilogue_t kind = CUBLASLT_EPILOGUE_DEFAULT;
  /// Bias (input) or bias gradient (output), per kind.
  const void *bias = nullptr;
  /// GELU_AUX: the pre-activation (output), column-major with leading
  /// dimension auxLd (a multiple of 8).
  void *aux = nullptr;
  int64_t auxLd = 0;
};

namespace detail {
template <auto Destroy> struct LtDeleter {
  template <typename P> void operator()(P p) const { Destroy(p); }
};
template <typename P, auto Destroy>
using LtHandle = std::unique_ptr<std::remove_pointer_t<P>, LtDeleter<Destroy>>;
using MatmulDesc = LtHandle<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy>;
using Layout = LtHandle<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>;
using Preference =
    LtHandle<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>;

template <typename V>
cublasStatus_t setAttribute(cublasLtMatmulDesc_t desc,
                            cublasLtMatmulDescAttributes_t attribute,
                            const V &value) {
  return cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof(V));
}

/// The largest power of two up to 16 dividing the address: what the
/// heuristic must assume of a pointer.
inline uint32_t alignmentOf(const void *p) {
  auto address = reinterpret_cast<uintptr_t>(p);
  uint32_t alignment = 1;
  while (alignment < 16 && address % (2 * alignment) == 0)
    alignment *= 2;
  return alignment;
}

#define FXMLIR_LT_TRY(call)                                                    \
  if (cublasStatus_t status = (call); status != CUBLAS_STATUS_SUCCESS)         \
    return status;
} // namespace detail

/// D (m x n, leading dimension ldd, column-major) = op(A) op(B), of m x k
/// and k x n, with the epilogue, on the context's stream. Returns
/// CUBLAS_STATUS_NOT_SUPPORTED when the heuristic finds no algorithm.
inline cublasStatus_t ltMatmul(const LtContext &context, cudaDataType_t type,
                               cublasComputeType_t compute, LtOperand a,
                               LtOperand b, void *d, int64_t ldd, uint64_t m,
                               uint64_t n, const LtEpilogue &epilogue) {
  using namespace detail;
  cublasLtMatmulDesc_t rawDesc = nullptr;
  FXMLIR_LT_TRY(cublasLtMatmulDescCreate(&rawDesc, compute, CUDA_R_32F));
  MatmulDesc desc(rawDesc);
  cublasOperation_t opA = a.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = b.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  FXMLIR_LT_TRY(setAttribute(rawDesc, CUBLASLT_MATMUL_DESC_TRANSA, opA));
  FXMLIR_LT_TRY(setAttribute(rawDesc, CUBLASLT_MATMUL_DESC_TRANSB, opB));
  FXMLIR_LT_TRY(
      setAttribute(rawDesc, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue.kind));
  if (epilogue.bias)
    FXMLIR_LT_TRY(setAttribute(rawDesc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                               epilogue.bias));
  if (epilogue.aux) {
    FXMLIR_LT_TRY(setAttribute(
        rawDesc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, epilogue.aux));
    FXMLIR_LT_TRY(setAttribute(rawDesc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD,
                               epilogue.auxLd));
  }

  auto layout = [&](Layout &out, uint64_t rows, uint64_t cols,
                    int64_t ld) -> cublasStatus_t {
    cublasLtMatrixLayout_t raw = nullptr;
    cublasStatus_t status =
        cublasLtMatrixLayoutCreate(&raw, type, rows, cols, ld);
    out.reset(raw);
    return status;
  };
  Layout layoutA, layoutB, layoutD;
  FXMLIR_LT_TRY(layout(layoutA, a.rows, a.cols, a.ld));
  FXMLIR_LT_TRY(layout(layoutB, b.rows, b.cols, b.ld));
  FXMLIR_LT_TRY(layout(layoutD, m, n, ldd));

  cublasLtMatmulPreference_t rawPreference = nullptr;
  FXMLIR_LT_TRY(cublasLtMatmulPreferenceCreate(&rawPreference));
  Preference preference(rawPreference);
  auto prefer = [&](cublasLtMatmulPreferenceAttributes_t attribute,
                    auto value) {
    return cublasLtMatmulPreferenceSetAttribute(rawPreference, attribute,
                                                &value, sizeof(value));
  };
  FXMLIR_LT_TRY(prefer(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                       uint64_t(context.workspaceSize)));
  FXMLIR_LT_TRY(
      prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignmentOf(a.data)));
  FXMLIR_LT_TRY(
      prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignmentOf(b.data)));
  FXMLIR_LT_TRY(
      prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignmentOf(d)));
  FXMLIR_LT_TRY(
      prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignmentOf(d)));

  cublasLtMatmulHeuristicResult_t heuristic = {};
  int found = 0;
  FXMLIR_LT_TRY(cublasLtMatmulAlgoGetHeuristic(
      context.handle, rawDesc, layoutA.get(), layoutB.get(), layoutD.get(),
      layoutD.get(), rawPreference, 1, &heuristic, &found));
  if (found == 0)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  float alpha = 1.0f, beta = 0.0f;
  return cublasLtMatmul(context.handle, rawDesc, &alpha, a.data, layoutA.get(),
                        b.data, layoutB.get(), &beta, d, layoutD.get(), d,
                        layoutD.get(), &heuristic.algo, context.workspace,
                        context.workspaceSize, context.stream);
}

#undef FXMLIR_LT_TRY

} // namespace fxmlir::kernels::cuda

#endif // FXMLIR_KERNELS_CUDA_LTMATMUL_CUH
