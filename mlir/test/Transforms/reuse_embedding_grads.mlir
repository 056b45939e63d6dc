// RUN: fxmlir-opt %s --fxmlir-reuse-embedding-grads | FileCheck %s
// RUN: fxmlir-opt %s --fxmlir-backward | FileCheck %s --check-prefix=BACKWARD
// RUN: fxmlir-opt %s --fxmlir-forward | FileCheck %s --check-prefix=FORWARD

!g = tensor<2x128x512xf32, #fxmlir.device<"cpu">>
!i = tensor<2x128xsi64, #fxmlir.device<"cpu">>
!w = tensor<32000x512xf32, #fxmlir.device<"cpu">>

// A language model's token-embedding gradient, as AOTAutograd's backward
// graph makes it: computed into a reused block. Only the backward stage's
// pipeline runs the pass by default.
// CHECK-LABEL: func.func @token_embedding
// CHECK: %[[DW:.*]] = fxmlir.embedding_grad %arg0, %arg1 {num_weights = 32000 : i64, padding_idx = -1 : i64} : (tensor<2x128x512xf32, #fxmlir.device<"cpu">>, tensor<2x128xsi64, #fxmlir.device<"cpu">>) -> tensor<32000x512xf32, #fxmlir.device<"cpu">>
// CHECK-NOT: embedding_dense_backward
// CHECK: return %[[DW]]
// BACKWARD-LABEL: func.func @token_embedding
// BACKWARD: fxmlir.embedding_grad
// FORWARD-LABEL: func.func @token_embedding
// FORWARD: fxmlir.aten.embedding_dense_backward
func.func @token_embedding(%g: !g, %i: !i) -> !w {
  %0 = fxmlir.aten.embedding_dense_backward %g, %i {num_weights = 32000 : i64, padding_idx = -1 : i64, scale_grad_by_freq = false} : (!g, !i) -> !w
  return %0 : !w
}

// A padding index, int32 indices, bf16, a dynamic batch: all kept.
// CHECK-LABEL: func.func @padding_bf16_dynamic
// CHECK: fxmlir.embedding_grad %arg0, %arg1 {num_weights = 100 : i64, padding_idx = 0 : i64} : (tensor<?x16xbf16, #fxmlir.device<"cpu">>, tensor<?xsi32, #fxmlir.device<"cpu">>) -> tensor<100x16xbf16, #fxmlir.device<"cpu">>
func.func @padding_bf16_dynamic(%g: tensor<?x16xbf16, #fxmlir.device<"cpu">>, %i: tensor<?xsi32, #fxmlir.device<"cpu">>) -> tensor<100x16xbf16, #fxmlir.device<"cpu">> {
  %0 = fxmlir.aten.embedding_dense_backward %g, %i {num_weights = 100 : i64, padding_idx = 0 : i64, scale_grad_by_freq = false} : (tensor<?x16xbf16, #fxmlir.device<"cpu">>, tensor<?xsi32, #fxmlir.device<"cpu">>) -> tensor<100x16xbf16, #fxmlir.device<"cpu">>
  return %0 : tensor<100x16xbf16, #fxmlir.device<"cpu">>
}

// Frequency-scaled gradients keep ATen's op: the fused op does not scale.
// CHECK-LABEL: func.func @scaled_by_frequency
// CHECK: fxmlir.aten.embedding_dense_backward
// CHECK-NOT: fxmlir.embedding_grad
func.func @scaled_by_frequency(%g: !g, %i: !i) -> !w {
  %0 = fxmlir.aten.embedding_dense_backward %g, %i {num_weights = 32000 : i64, padding_idx = -1 : i64, scale_grad_by_freq = true} : (!g, !i) -> !w
  return %0 : !w
}

// CUDA's caching allocator reuses blocks already: no CUDA kernel, left.
// CHECK-LABEL: func.func @cuda
// CHECK: fxmlir.aten.embedding_dense_backward
// CHECK-NOT: fxmlir.embedding_grad
func.func @cuda(%g: tensor<2x8x16xf32, #fxmlir.device<"cuda:0">>, %i: tensor<2x8xsi64, #fxmlir.device<"cuda:0">>) -> tensor<100x16xf32, #fxmlir.device<"cuda:0">> {
  %0 = fxmlir.aten.embedding_dense_backward %g, %i {num_weights = 100 : i64, padding_idx = -1 : i64, scale_grad_by_freq = false} : (tensor<2x8x16xf32, #fxmlir.device<"cuda:0">>, tensor<2x8xsi64, #fxmlir.device<"cuda:0">>) -> tensor<100x16xf32, #fxmlir.device<"cuda:0">>
  return %0 : tensor<100x16xf32, #fxmlir.device<"cuda:0">>
}

// Indices viewed to another shape than grad's leading dims (ATen needs only
// their count to agree): left, as the fused op takes grad's leading dims.
// CHECK-LABEL: func.func @flat_indices
// CHECK: fxmlir.aten.embedding_dense_backward
// CHECK-NOT: fxmlir.embedding_grad
func.func @flat_indices(%g: tensor<2x8x16xf32, #fxmlir.device<"cpu">>, %i: tensor<16xsi64, #fxmlir.device<"cpu">>) -> tensor<100x16xf32, #fxmlir.device<"cpu">> {
  %0 = fxmlir.aten.embedding_dense_backward %g, %i {num_weights = 100 : i64, padding_idx = -1 : i64, scale_grad_by_freq = false} : (tensor<2x8x16xf32, #fxmlir.device<"cpu">>, tensor<16xsi64, #fxmlir.device<"cpu">>) -> tensor<100x16xf32, #fxmlir.device<"cpu">>
  return %0 : tensor<100x16xf32, #fxmlir.device<"cpu">>
}
