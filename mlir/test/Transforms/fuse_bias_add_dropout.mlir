// RUN: fxmlir-opt %s --fxmlir-fuse-bias-add-dropout | FileCheck %s

!x = tensor<8x64xf32, #fxmlir.device<"cpu">>
!b = tensor<64xf32, #fxmlir.device<"cpu">>
!m = tensor<8x64xi1, #fxmlir.device<"cpu">>

// The dropout's mask result is the random_mask_like result: what the
// backward (native_dropout_backward) reads.
// CHECK-LABEL: func.func @fuse
// CHECK: %[[MASK:.*]] = fxmlir.random_mask_like %arg0 {p = 1.000000e-01 : f64}
// CHECK: %[[OUT:.*]] = fxmlir.fused_bias_add_mask_scale %arg0, %arg1, %[[MASK]] {axis = 1 : i64, scale = 1.1111111111111112 : f64}
// CHECK: return %[[OUT]], %[[MASK]]
func.func @fuse(%x: !x, %b: !b) -> (!x, !m) {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %1:2 = fxmlir.aten.native_dropout %0 {p = 0.1 : f64, train = true} : (!x) -> (!x, !m)
  return %1#0, %1#1 : !x, !m
}


// train absent means training.
// CHECK-LABEL: func.func @train_unset
// CHECK: fxmlir.fused_bias_add_mask_scale
func.func @train_unset(%x: !x, %b: !b) -> !x {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %1:2 = fxmlir.aten.native_dropout %0 {p = 0.5 : f64} : (!x) -> (!x, !m)
  return %1#0 : !x
}


// CHECK-LABEL: func.func @eval_mode
// CHECK: fxmlir.aten.native_dropout
// CHECK-NOT: fxmlir.random_mask_like
func.func @eval_mode(%x: !x, %b: !b) -> !x {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %1:2 = fxmlir.aten.native_dropout %0 {p = 0.1 : f64, train = false} : (!x) -> (!x, !m)
  return %1#0 : !x
}


// CHECK-LABEL: func.func @p_zero
// CHECK: fxmlir.aten.native_dropout
// CHECK-NOT: fxmlir.random_mask_like
func.func @p_zero(%x: !x, %b: !b) -> !x {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %1:2 = fxmlir.aten.native_dropout %0 {p = 0.0 : f64, train = true} : (!x) -> (!x, !m)
  return %1#0 : !x
}


// CHECK-LABEL: func.func @multi_use
// CHECK: fxmlir.aten.native_dropout
// CHECK-NOT: fxmlir.fused_bias_add_mask_scale
func.func @multi_use(%x: !x, %b: !b) -> (!x, !x) {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %1:2 = fxmlir.aten.native_dropout %0 {p = 0.1 : f64, train = true} : (!x) -> (!x, !m)
  return %1#0, %0 : !x, !x
}


// CHECK-LABEL: func.func @unsupported_dtype
// CHECK-NOT: fxmlir.random_mask_like
func.func @unsupported_dtype(%x: tensor<8x64xf64, #fxmlir.device<"cuda:0">>, %b: tensor<64xf64, #fxmlir.device<"cuda:0">>) -> tensor<8x64xf64, #fxmlir.device<"cuda:0">> {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (tensor<8x64xf64, #fxmlir.device<"cuda:0">>, tensor<64xf64, #fxmlir.device<"cuda:0">>) -> tensor<8x64xf64, #fxmlir.device<"cuda:0">>
  %1:2 = fxmlir.aten.native_dropout %0 {p = 0.1 : f64, train = true} : (tensor<8x64xf64, #fxmlir.device<"cuda:0">>) -> (tensor<8x64xf64, #fxmlir.device<"cuda:0">>, tensor<8x64xi1, #fxmlir.device<"cuda:0">>)
  return %1#0 : tensor<8x64xf64, #fxmlir.device<"cuda:0">>
}
