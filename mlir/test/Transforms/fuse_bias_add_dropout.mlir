// RUN: fxmlir-opt %s --fxmlir-fuse-bias-add-dropout | FileCheck %s

// The seed's rewrite alone: the mask drawn by random_mask_like where the
// dropout drew it, and bias, mask and scale 1 / (1 - p) applied in one
// kernel (fxmlir-fuse-mask-draws merges the two: fuse_mask_draws.mlir).

!x = tensor<8x64xf32, #fxmlir.device<"cpu">>
!b = tensor<64xf32, #fxmlir.device<"cpu">>
!m = tensor<8x64xi1, #fxmlir.device<"cpu">>

// Before autodiff (Dynamo's F.dropout).
// CHECK-LABEL: func.func @before_autodiff
// CHECK: %[[M:.*]] = fxmlir.random_mask_like %arg0 {p = 2.000000e-01 : f64} : (tensor<8x64xf32, {{.*}}>) -> tensor<8x64xi1, #fxmlir.device<"cpu">>
// CHECK: %[[Y:.*]] = fxmlir.fused_bias_add_mask_scale %arg0, %arg1, %[[M]] {axis = 1 : i64, scale = 1.250000e+00 : f64}
// CHECK-NOT: fxmlir.aten.dropout
// CHECK-NOT: fxmlir.bias_add
// CHECK: return %[[Y]]
func.func @before_autodiff(%x: !x, %b: !b) -> !x {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %1 = fxmlir.aten.dropout %0 {p = 0.2 : f64, train = true} : (!x) -> !x
  return %1 : !x
}

// After autodiff: the drawn mask replaces native_dropout's (the backward
// reads it); train absent means training.
// CHECK-LABEL: func.func @after_autodiff
// CHECK: %[[M:.*]] = fxmlir.random_mask_like %arg0 {p = 5.000000e-01 : f64}
// CHECK: %[[Y:.*]] = fxmlir.fused_bias_add_mask_scale %arg0, %arg1, %[[M]] {axis = 1 : i64, scale = 2.000000e+00 : f64}
// CHECK-NOT: fxmlir.aten.native_dropout
// CHECK: return %[[Y]], %[[M]]
func.func @after_autodiff(%x: !x, %b: !b) -> (!x, !m) {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %1:2 = fxmlir.aten.native_dropout %0 {p = 0.5 : f64} : (!x) -> (!x, !m)
  return %1#0, %1#1 : !x, !m
}

// Left alone: eval mode, p = 0, a bias_add read elsewhere, a dtype without
// a kernel, and a fused bias_add + activation (fxmlir-fuse-mask-draws
// takes that one: there is no two-kernel form of it).
// CHECK-LABEL: func.func @not_rewritten
// CHECK-NOT: fxmlir.random_mask_like
// CHECK-NOT: fxmlir.fused_bias_add_mask_scale
// CHECK: return
func.func @not_rewritten(%x: !x, %b: !b, %x64: tensor<8x64xf64, #fxmlir.device<"cpu">>, %b64: tensor<64xf64, #fxmlir.device<"cpu">>) -> (!x, !x, !x, !x, tensor<8x64xf64, #fxmlir.device<"cpu">>, !x) {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %1 = fxmlir.aten.dropout %0 {p = 0.1 : f64, train = false} : (!x) -> !x
  %2 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %3:2 = fxmlir.aten.native_dropout %2 {p = 0.0 : f64, train = true} : (!x) -> (!x, !m)
  %4 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %5 = fxmlir.aten.dropout %4 {p = 0.1 : f64, train = true} : (!x) -> !x
  %6 = fxmlir.bias_add %x64, %b64 {axis = 1 : i64} : (tensor<8x64xf64, #fxmlir.device<"cpu">>, tensor<64xf64, #fxmlir.device<"cpu">>) -> tensor<8x64xf64, #fxmlir.device<"cpu">>
  %7 = fxmlir.aten.dropout %6 {p = 0.1 : f64, train = true} : (tensor<8x64xf64, #fxmlir.device<"cpu">>) -> tensor<8x64xf64, #fxmlir.device<"cpu">>
  %8 = fxmlir.fused_bias_act %x, %b {activation = "gelu", axis = 1 : i64} : (!x, !b) -> !x
  %9 = fxmlir.aten.dropout %8 {p = 0.1 : f64, train = true} : (!x) -> !x
  return %1, %3#0, %5, %4, %7, %9 : !x, !x, !x, !x, tensor<8x64xf64, #fxmlir.device<"cpu">>, !x
}
