// RUN: fxmlir-opt %s --fxmlir-eager-random | FileCheck %s
// RUN: fxmlir-opt %s --fxmlir-forward | FileCheck %s --check-prefix=DEFAULT

!x = tensor<8x64xf32, #fxmlir.device<"cpu">>
!b = tensor<64xf32, #fxmlir.device<"cpu">>
!m = tensor<8x64xi1, #fxmlir.device<"cpu">>
!p = tensor<64xui8, #fxmlir.device<"cpu">>

// Every fused op that draws random numbers draws eager's: the attribute is
// set. Ops that draw nothing, and ATen's own random ops (eager's already),
// are left alone.
// CHECK-LABEL: func.func @random_ops
// CHECK: fxmlir.random_mask_like %arg0 {eager_random = true, p = 1.000000e-01 : f64}
// CHECK: fxmlir.fused_bias_dropout_add %arg0, %arg1, %arg0 {activation = "gelu", axis = 1 : i64, eager_random = true, p = 1.000000e-01 : f64, packed = false}
// CHECK: fxmlir.fused_bias_act %arg0, %arg1 {activation = "gelu", axis = 1 : i64} :
// CHECK: fxmlir.aten.native_dropout %arg0 {p = 1.000000e-01 : f64, train = true} :
// The default pipelines leave the masks to fxmlir's own kernels.
// DEFAULT-LABEL: func.func @random_ops
// DEFAULT-NOT: eager_random
// DEFAULT: return
func.func @random_ops(%x: !x, %b: !b) -> (!m, !x, !x, !x) {
  %0 = fxmlir.random_mask_like %x {p = 0.1 : f64} : (!x) -> !m
  %1:2 = fxmlir.fused_bias_dropout_add %x, %b, %x {activation = "gelu", axis = 1 : i64, p = 0.1 : f64, packed = false} : (!x, !b, !x) -> (!x, !m)
  %2 = fxmlir.fused_bias_act %x, %b {activation = "gelu", axis = 1 : i64} : (!x, !b) -> !x
  %3:2 = fxmlir.aten.native_dropout %x {p = 0.1 : f64, train = true} : (!x) -> (!x, !m)
  return %0, %1#0, %2, %3#0 : !m, !x, !x, !x
}

// Set already (a graph fused before autodiff): kept.
// CHECK-LABEL: func.func @already_set
// CHECK: fxmlir.fused_bias_dropout_add %arg0, %arg1, %{{.*}} {activation = "none", axis = 1 : i64, eager_random = true, p = 2.000000e-01 : f64, packed = true}
func.func @already_set(%x: !x, %b: !b) -> (!x, !p) {
  %none = fxmlir.none
  %0:2 = fxmlir.fused_bias_dropout_add %x, %b, %none {activation = "none", axis = 1 : i64, eager_random = true, p = 0.2 : f64, packed = true} : (!x, !b, none) -> (!x, !p)
  return %0#0, %0#1 : !x, !p
}
