// RUN: fxmlir-opt %s --fxmlir-fuse-bias-add-dropout --fxmlir-fuse-mask-draws | FileCheck %s

!x = tensor<8x64xf32, #fxmlir.device<"cpu">>
!b = tensor<64xf32, #fxmlir.device<"cpu">>
!m = tensor<8x64xi1, #fxmlir.device<"cpu">>
!p = tensor<64xui8, #fxmlir.device<"cpu">>

// After autodiff, the dropout's bool mask result becomes the fused op's:
// what the backward (native_dropout_backward) reads.
// CHECK-LABEL: func.func @fuse
// CHECK: %[[NONE:.*]] = fxmlir.none
// CHECK: %[[Y:.*]], %[[MASK:.*]] = fxmlir.fused_bias_dropout_add %arg0, %arg1, %[[NONE]] {activation = "none", axis = 1 : i64, p = 1.000000e-01 : f64, packed = false} : ({{.*}}, none) -> ({{.*}}xi1, {{.*}})
// CHECK-NOT: fxmlir.aten.native_dropout
// CHECK: return %[[Y]], %[[MASK]]
func.func @fuse(%x: !x, %b: !b) -> (!x, !m) {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %1:2 = fxmlir.aten.native_dropout %0 {p = 0.1 : f64, train = true} : (!x) -> (!x, !m)
  return %1#0, %1#1 : !x, !m
}


// After autodiff, the residual add joins, in either operand order.
// CHECK-LABEL: func.func @residual
// CHECK: %[[Y:.*]], %[[MASK:.*]] = fxmlir.fused_bias_dropout_add %arg0, %arg1, %arg2 {activation = "none", axis = 1 : i64, p = 1.000000e-01 : f64, packed = false}
// CHECK: %[[Y2:.*]], %[[MASK2:.*]] = fxmlir.fused_bias_dropout_add %arg0, %arg1, %arg2 {activation = "none", axis = 1 : i64, p = 2.000000e-01 : f64, packed = false}
// CHECK-NOT: fxmlir.aten.add.Tensor
// CHECK: return %[[Y]], %[[MASK]], %[[Y2]], %[[MASK2]]
func.func @residual(%x: !x, %b: !b, %r: !x) -> (!x, !m, !x, !m) {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %1:2 = fxmlir.aten.native_dropout %0 {p = 0.1 : f64, train = true} : (!x) -> (!x, !m)
  %2 = fxmlir.aten.add.Tensor %r, %1#0 {alpha = 1 : i64} : (!x, !x) -> !x
  %3 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %4:2 = fxmlir.aten.native_dropout %3 {p = 0.2 : f64, train = true} : (!x) -> (!x, !m)
  %5 = fxmlir.aten.add.Tensor %4#0, %r {alpha = 1 : i64} : (!x, !x) -> !x
  return %2, %1#1, %5, %4#1 : !x, !m, !x, !m
}


// Before autodiff (Dynamo's F.dropout): the mask is packed, 1 bit per
// element, for the fused op's own backward.
// CHECK-LABEL: func.func @before_autodiff
// CHECK: %[[NONE:.*]] = fxmlir.none
// CHECK: %[[Y:.*]], %{{.*}} = fxmlir.fused_bias_dropout_add %arg0, %arg1, %arg2 {activation = "none", axis = 1 : i64, p = 1.000000e-01 : f64, packed = true} : {{.*}} -> ({{.*}}, tensor<64xui8, {{.*}}>)
// CHECK: %[[Y2:.*]], %{{.*}} = fxmlir.fused_bias_dropout_add %arg0, %arg1, %[[NONE]] {activation = "none", axis = 1 : i64, p = 5.000000e-01 : f64, packed = true} : ({{.*}}, none) -> ({{.*}}, tensor<64xui8, {{.*}}>)
// CHECK-NOT: fxmlir.aten.dropout
// CHECK: return %[[Y]], %[[Y2]]
func.func @before_autodiff(%x: !x, %b: !b, %r: !x) -> (!x, !x) {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %1 = fxmlir.aten.dropout %0 {p = 0.1 : f64, train = true} : (!x) -> !x
  %2 = fxmlir.aten.add.Tensor %r, %1 {alpha = 1 : i64} : (!x, !x) -> !x
  %3 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %4 = fxmlir.aten.dropout %3 {p = 0.5 : f64, train = true} : (!x) -> !x
  return %2, %4 : !x, !x
}


// train absent means training.
// CHECK-LABEL: func.func @train_unset
// CHECK: fxmlir.fused_bias_dropout_add
func.func @train_unset(%x: !x, %b: !b) -> !x {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %1:2 = fxmlir.aten.native_dropout %0 {p = 0.5 : f64} : (!x) -> (!x, !m)
  return %1#0 : !x
}


// CHECK-LABEL: func.func @eval_mode
// CHECK: fxmlir.aten.native_dropout
// CHECK: fxmlir.aten.dropout
// CHECK-NOT: fxmlir.fused_bias_dropout_add
func.func @eval_mode(%x: !x, %b: !b, %r: !x) -> (!x, !x) {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %1:2 = fxmlir.aten.native_dropout %0 {p = 0.1 : f64, train = false} : (!x) -> (!x, !m)
  %2 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %3 = fxmlir.aten.dropout %2 {p = 0.1 : f64, train = false} : (!x) -> !x
  %4 = fxmlir.aten.add.Tensor %r, %3 {alpha = 1 : i64} : (!x, !x) -> !x
  return %1#0, %4 : !x, !x
}


// CHECK-LABEL: func.func @p_zero
// CHECK: fxmlir.aten.native_dropout
// CHECK-NOT: fxmlir.fused_bias_dropout_add
func.func @p_zero(%x: !x, %b: !b) -> !x {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %1:2 = fxmlir.aten.native_dropout %0 {p = 0.0 : f64, train = true} : (!x) -> (!x, !m)
  return %1#0 : !x
}


// CHECK-LABEL: func.func @multi_use
// CHECK: fxmlir.aten.native_dropout
// CHECK-NOT: fxmlir.fused_bias_dropout_add
func.func @multi_use(%x: !x, %b: !b) -> (!x, !x) {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %1:2 = fxmlir.aten.native_dropout %0 {p = 0.1 : f64, train = true} : (!x) -> (!x, !m)
  return %1#0, %0 : !x, !x
}


// The dropout's output is used besides the add: the dropout fuses alone.
// CHECK-LABEL: func.func @output_multi_use
// CHECK: %[[Y:.*]], %{{.*}} = fxmlir.fused_bias_dropout_add %arg0, %arg1, %{{.*}} {{.*}} packed = true} : ({{.*}}, none)
// CHECK: %[[ADD:.*]] = fxmlir.aten.add.Tensor %arg2, %[[Y]]
// CHECK: return %[[ADD]], %[[Y]]
func.func @output_multi_use(%x: !x, %b: !b, %r: !x) -> (!x, !x) {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %1 = fxmlir.aten.dropout %0 {p = 0.1 : f64, train = true} : (!x) -> !x
  %2 = fxmlir.aten.add.Tensor %r, %1 {alpha = 1 : i64} : (!x, !x) -> !x
  return %2, %1 : !x, !x
}


// A broadcasting add (a bias, not a residual) and an alpha other than 1
// are not a residual add; nor is an add before which the mask is read, nor
// one that promotes (autocast: a bf16 dropout onto an f32 residual).
// CHECK-LABEL: func.func @not_residual
// CHECK: %[[NONE:.*]] = fxmlir.none
// CHECK: %[[Y:.*]], %{{.*}} = fxmlir.fused_bias_dropout_add %arg0, %arg1, %[[NONE]]
// CHECK: fxmlir.aten.add.Tensor %[[Y]], %arg1 {alpha = 1 : i64}
// CHECK: %[[Y2:.*]], %{{.*}} = fxmlir.fused_bias_dropout_add %arg0, %arg1, %[[NONE]]
// CHECK: fxmlir.aten.add.Tensor %arg2, %[[Y2]] {alpha = 2 : i64}
// CHECK: %[[Y3:.*]], %[[MASK:.*]] = fxmlir.fused_bias_dropout_add %arg0, %arg1, %[[NONE]]
// CHECK: fxmlir.aten.logical_not %[[MASK]]
// CHECK: fxmlir.aten.add.Tensor %arg2, %[[Y3]] {alpha = 1 : i64}
func.func @not_residual(%x: !x, %b: !b, %r: !x) -> (tensor<8x64xf32, #fxmlir.device<"cpu">>, !x, !x, !m) {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %1 = fxmlir.aten.dropout %0 {p = 0.1 : f64, train = true} : (!x) -> !x
  %2 = fxmlir.aten.add.Tensor %1, %b {alpha = 1 : i64} : (!x, !b) -> !x
  %3 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %4 = fxmlir.aten.dropout %3 {p = 0.1 : f64, train = true} : (!x) -> !x
  %5 = fxmlir.aten.add.Tensor %r, %4 {alpha = 2 : i64} : (!x, !x) -> !x
  %6 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %7:2 = fxmlir.aten.native_dropout %6 {p = 0.1 : f64, train = true} : (!x) -> (!x, !m)
  %8 = fxmlir.aten.logical_not %7#1 : (!m) -> !m
  %9 = fxmlir.aten.add.Tensor %r, %7#0 {alpha = 1 : i64} : (!x, !x) -> !x
  return %2, %5, %9, %8 : !x, !x, !x, !m
}


// CHECK-LABEL: func.func @unsupported_dtype
// CHECK-NOT: fxmlir.fused_bias_dropout_add
func.func @unsupported_dtype(%x: tensor<8x64xf64, #fxmlir.device<"cuda:0">>, %b: tensor<64xf64, #fxmlir.device<"cuda:0">>) -> tensor<8x64xf64, #fxmlir.device<"cuda:0">> {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (tensor<8x64xf64, #fxmlir.device<"cuda:0">>, tensor<64xf64, #fxmlir.device<"cuda:0">>) -> tensor<8x64xf64, #fxmlir.device<"cuda:0">>
  %1:2 = fxmlir.aten.native_dropout %0 {p = 0.1 : f64, train = true} : (tensor<8x64xf64, #fxmlir.device<"cuda:0">>) -> (tensor<8x64xf64, #fxmlir.device<"cuda:0">>, tensor<8x64xi1, #fxmlir.device<"cuda:0">>)
  return %1#0 : tensor<8x64xf64, #fxmlir.device<"cuda:0">>
}


// CHECK-LABEL: func.func @promoting_add
// CHECK: %[[Y:.*]], %{{.*}} = fxmlir.fused_bias_dropout_add %arg0, %arg1, %{{.*}} {{.*}} : ({{.*}}, none)
// CHECK: fxmlir.aten.add.Tensor %arg2, %[[Y]]
func.func @promoting_add(%x: tensor<8x64xbf16, #fxmlir.device<"cpu">>, %b: tensor<64xbf16, #fxmlir.device<"cpu">>, %r: !x) -> !x {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (tensor<8x64xbf16, #fxmlir.device<"cpu">>, tensor<64xbf16, #fxmlir.device<"cpu">>) -> tensor<8x64xbf16, #fxmlir.device<"cpu">>
  %1 = fxmlir.aten.dropout %0 {p = 0.1 : f64, train = true} : (tensor<8x64xbf16, #fxmlir.device<"cpu">>) -> tensor<8x64xbf16, #fxmlir.device<"cpu">>
  %2 = fxmlir.aten.add.Tensor %r, %1 {alpha = 1 : i64} : (!x, tensor<8x64xbf16, #fxmlir.device<"cpu">>) -> !x
  return %2 : !x
}


// A dropout after a fused activation (Linear -> GELU -> Dropout): the
// activation moves into the dropout's kernel, with or without a residual
// add, before and after autodiff.
// CHECK-LABEL: func.func @activation
// CHECK: %[[NONE:.*]] = fxmlir.none
// CHECK: %[[Y1:.*]], %{{.*}} = fxmlir.fused_bias_dropout_add %arg0, %arg1, %[[NONE]] {activation = "gelu", axis = 1 : i64, p = 1.000000e-01 : f64, packed = true}
// CHECK: %[[Y2:.*]], %{{.*}} = fxmlir.fused_bias_dropout_add %arg0, %arg1, %arg2 {activation = "gelu_tanh", axis = 1 : i64, p = 2.000000e-01 : f64, packed = true}
// CHECK: %[[Y3:.*]], %[[M3:.*]] = fxmlir.fused_bias_dropout_add %arg0, %arg1, %[[NONE]] {activation = "relu", axis = 1 : i64, p = 3.000000e-01 : f64, packed = false}
// CHECK: %[[Y4:.*]], %{{.*}} = fxmlir.fused_bias_dropout_add %arg0, %arg1, %arg2 {activation = "silu", axis = 1 : i64, p = 4.000000e-01 : f64, packed = true}
// CHECK-NOT: fxmlir.aten.dropout
// CHECK-NOT: fxmlir.aten.native_dropout
// CHECK-NOT: fxmlir.fused_bias_act
// CHECK: return %[[Y1]], %[[Y2]], %[[Y3]], %[[M3]], %[[Y4]]
func.func @activation(%x: !x, %b: !b, %r: !x) -> (!x, !x, !x, !m, !x) {
  %0 = fxmlir.fused_bias_act %x, %b {activation = "gelu", axis = 1 : i64} : (!x, !b) -> !x
  %1 = fxmlir.aten.dropout %0 {p = 0.1 : f64, train = true} : (!x) -> !x
  %2 = fxmlir.fused_bias_act %x, %b {activation = "gelu_tanh", axis = 1 : i64} : (!x, !b) -> !x
  %3 = fxmlir.aten.dropout %2 {p = 0.2 : f64, train = true} : (!x) -> !x
  %4 = fxmlir.aten.add.Tensor %3, %r {alpha = 1 : i64} : (!x, !x) -> !x
  %5 = fxmlir.fused_bias_act %x, %b {activation = "relu", axis = 1 : i64} : (!x, !b) -> !x
  %6:2 = fxmlir.aten.native_dropout %5 {p = 0.3 : f64, train = true} : (!x) -> (!x, !m)
  %7 = fxmlir.fused_bias_act %x, %b {activation = "silu", axis = 1 : i64} : (!x, !b) -> !x
  %8 = fxmlir.aten.dropout %7 {p = 0.4 : f64, train = true} : (!x) -> !x
  %9 = fxmlir.aten.add.Tensor %r, %8 {alpha = 1 : i64} : (!x, !x) -> !x
  return %1, %4, %6#0, %6#1, %9 : !x, !x, !x, !m, !x
}


// The activation's value read elsewhere (saved for a backward, returned)
// must still be computed: the dropout stays apart. So does a dropout in
// eval mode, and one of an activation the kernels have no bias form of
// (a plain aten.gelu: no bias add to fold).
// CHECK-LABEL: func.func @activation_not_fused
// CHECK: fxmlir.fused_bias_act %arg0, %arg1 {activation = "gelu"
// CHECK: fxmlir.aten.dropout
// CHECK: fxmlir.fused_bias_act %arg0, %arg1 {activation = "relu"
// CHECK: fxmlir.aten.dropout
// CHECK: fxmlir.aten.gelu
// CHECK: fxmlir.aten.native_dropout
// CHECK-NOT: fxmlir.fused_bias_dropout_add
func.func @activation_not_fused(%x: !x, %b: !b) -> (!x, !x, !x, !x) {
  %0 = fxmlir.fused_bias_act %x, %b {activation = "gelu", axis = 1 : i64} : (!x, !b) -> !x
  %1 = fxmlir.aten.dropout %0 {p = 0.1 : f64, train = true} : (!x) -> !x
  %2 = fxmlir.fused_bias_act %x, %b {activation = "relu", axis = 1 : i64} : (!x, !b) -> !x
  %3 = fxmlir.aten.dropout %2 {p = 0.1 : f64, train = false} : (!x) -> !x
  %4 = fxmlir.aten.gelu %x {approximate = "none"} : (!x) -> !x
  %5:2 = fxmlir.aten.native_dropout %4 {p = 0.1 : f64, train = true} : (!x) -> (!x, !m)
  return %1, %0, %3, %5#0 : !x, !x, !x, !x
}


// The fused op draws its mask where the dropout drew it: a random op
// between the dropout and its residual add still draws after it (eager's
// order of draws, which eager_random reproduces). A residual computed after
// the dropout puts the fused op at the add.
// CHECK-LABEL: func.func @draw_order
// CHECK: fxmlir.fused_bias_dropout_add %arg0, %arg1, %arg2 {activation = "none", axis = 1 : i64, p = 1.000000e-01 : f64, packed = false}
// CHECK-NEXT: fxmlir.aten.native_dropout %arg2 {p = 2.000000e-01 : f64, train = true}
// CHECK-NEXT: %[[LATER:.*]] = fxmlir.aten.mul.Tensor %arg2, %arg2
// CHECK-NEXT: fxmlir.fused_bias_dropout_add %arg0, %arg1, %[[LATER]] {activation = "none", axis = 1 : i64, p = 3.000000e-01 : f64, packed = false}
// CHECK-NOT: fxmlir.aten.add.Tensor
func.func @draw_order(%x: !x, %b: !b, %r: !x) -> (!x, !m, !x, !m, !x, !m) {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %1:2 = fxmlir.aten.native_dropout %0 {p = 0.1 : f64, train = true} : (!x) -> (!x, !m)
  %2:2 = fxmlir.aten.native_dropout %r {p = 0.2 : f64, train = true} : (!x) -> (!x, !m)
  %3 = fxmlir.aten.add.Tensor %r, %1#0 {alpha = 1 : i64} : (!x, !x) -> !x
  %4 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %5:2 = fxmlir.aten.native_dropout %4 {p = 0.3 : f64, train = true} : (!x) -> (!x, !m)
  %6 = fxmlir.aten.mul.Tensor %r, %r : (!x, !x) -> !x
  %7 = fxmlir.aten.add.Tensor %5#0, %6 {alpha = 1 : i64} : (!x, !x) -> !x
  return %3, %1#1, %2#0, %2#1, %7, %5#1 : !x, !m, !x, !m, !x, !m
}


// A draw and scale written by hand merge only when they are a dropout's:
// the scale 1 / (1 - p) of the draw's p (not 1.5 for p = 0.2), a mask drawn
// like x's type, and x and bias defined before the draw. The draw keeps its
// eager_random setting.
// CHECK-LABEL: func.func @draws_not_merged
// CHECK: fxmlir.fused_bias_dropout_add %arg0, %arg1, %{{.*}} {activation = "none", axis = 1 : i64, eager_random = true, p = 2.000000e-01 : f64, packed = true}
// CHECK: fxmlir.fused_bias_add_mask_scale
// CHECK: fxmlir.fused_bias_add_mask_scale
// CHECK: fxmlir.fused_bias_add_mask_scale
// CHECK-NOT: fxmlir.fused_bias_dropout_add
// CHECK: return
func.func @draws_not_merged(%x: !x, %b: !b, %bf: tensor<8x64xbf16, #fxmlir.device<"cpu">>) -> (!x, !x, !x, !x) {
  %m0 = fxmlir.random_mask_like %x {eager_random = true, p = 0.2 : f64} : (!x) -> !m
  %0 = fxmlir.fused_bias_add_mask_scale %x, %b, %m0 {axis = 1 : i64, scale = 1.25 : f64} : (!x, !b, !m) -> !x
  %m1 = fxmlir.random_mask_like %x {p = 0.2 : f64} : (!x) -> !m
  %1 = fxmlir.fused_bias_add_mask_scale %x, %b, %m1 {axis = 1 : i64, scale = 1.5 : f64} : (!x, !b, !m) -> !x
  %m2 = fxmlir.random_mask_like %bf {p = 0.2 : f64} : (tensor<8x64xbf16, #fxmlir.device<"cpu">>) -> !m
  %2 = fxmlir.fused_bias_add_mask_scale %x, %b, %m2 {axis = 1 : i64, scale = 1.25 : f64} : (!x, !b, !m) -> !x
  %m3 = fxmlir.random_mask_like %x {p = 0.2 : f64} : (!x) -> !m
  %later = fxmlir.aten.mul.Tensor %x, %x : (!x, !x) -> !x
  %3 = fxmlir.fused_bias_add_mask_scale %later, %b, %m3 {axis = 1 : i64, scale = 1.25 : f64} : (!x, !b, !m) -> !x
  return %0, %1, %2, %3 : !x, !x, !x, !x
}
