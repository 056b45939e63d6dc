// The per-stage pipelines, registered by name. Before autodiff, Dynamo's
// dropout (aten.dropout) fuses with its residual add and packs its mask;
// after autodiff native_dropout's bool mask is kept for the backward graph.
// RUN: fxmlir-opt %s --pass-pipeline="builtin.module(fxmlir-forward)" | FileCheck %s --check-prefix=AFTER
// RUN: fxmlir-opt %s --fxmlir-backward | FileCheck %s --check-prefix=AFTER
// RUN: fxmlir-opt %s --fxmlir-inference | FileCheck %s --check-prefix=AFTER
// RUN: fxmlir-opt %s --fxmlir-before-autodiff | FileCheck %s --check-prefix=BEFORE
// RUN: not fxmlir-opt %s --pass-pipeline="builtin.module(fxmlir-forward{x=1})" 2>&1 | FileCheck %s --check-prefix=OPTIONS
// RUN: not fxmlir-opt %s --pass-pipeline="builtin.module(fxmlir-forward{add=fxmlir-fuse-everything})" 2>&1 | FileCheck %s --check-prefix=UNKNOWN

!x = tensor<8x64xf32, #fxmlir.device<"cpu">>
!b = tensor<64xf32, #fxmlir.device<"cpu">>
!w = tensor<32x64xf32, #fxmlir.device<"cpu">>
!i = tensor<8x32xf32, #fxmlir.device<"cpu">>

// AFTER-LABEL: func.func @mlp
// AFTER: fxmlir.fused_bias_act
// AFTER: fxmlir.fused_bias_dropout_add {{.*}} packed = false
// AFTER-NOT: fxmlir.bias_add
// BEFORE-LABEL: func.func @mlp
// BEFORE: fxmlir.fused_bias_act
// BEFORE: fxmlir.fused_bias_dropout_add {{.*}} packed = false
// OPTIONS: bad options 'x=1'
// UNKNOWN: unknown pass 'fxmlir-fuse-everything' in option 'add'; pipeline passes: canonicalize, cse,
func.func @mlp(%x: !i, %w: !w, %b: !b, %w2: !w, %b2: !b) -> (!x, !x, tensor<8x64xi1, #fxmlir.device<"cpu">>) {
  %0 = fxmlir.aten.addmm %b, %x, %w {alpha = 1 : i64, beta = 1 : i64} : (!b, !i, !w) -> !x
  %1 = fxmlir.aten.gelu %0 {approximate = "none"} : (!x) -> !x
  %2 = fxmlir.aten.addmm %b2, %x, %w2 {alpha = 1 : i64, beta = 1 : i64} : (!b, !i, !w) -> !x
  %3:2 = fxmlir.aten.native_dropout %2 {p = 1.000000e-01 : f64, train = true} : (!x) -> (!x, tensor<8x64xi1, #fxmlir.device<"cpu">>)
  return %1, %3#0, %3#1 : !x, !x, tensor<8x64xi1, #fxmlir.device<"cpu">>
}

// A transformer MLP as Dynamo gives it (before autodiff) on CUDA: the tanh
// GELU goes into the first matmul, the dropout and the residual add into
// one kernel with a packed mask. After autodiff the same graph fuses too.
// BEFORE-LABEL: func.func @cuda_block
// BEFORE: fxmlir.fused_linear_gelu %arg0, %arg1, %arg2 {approximate = "tanh"}
// BEFORE: fxmlir.fused_bias_dropout_add {{.*}}, %arg0 {{.*}} packed = true
// BEFORE-NOT: fxmlir.aten.add.Tensor
// AFTER-LABEL: func.func @cuda_block
// AFTER: fxmlir.fused_linear_gelu
// AFTER: fxmlir.fused_bias_dropout_add {{.*}} packed = true
func.func @cuda_block(%x: tensor<8x64xbf16, #fxmlir.device<"cuda:0">>, %w: tensor<128x64xbf16, #fxmlir.device<"cuda:0">>,
                      %b: tensor<128xbf16, #fxmlir.device<"cuda:0">>, %w2: tensor<64x128xbf16, #fxmlir.device<"cuda:0">>,
                      %b2: tensor<64xbf16, #fxmlir.device<"cuda:0">>) -> tensor<8x64xbf16, #fxmlir.device<"cuda:0">> {
  %0 = fxmlir.aten.linear %x, %w, %b : (tensor<8x64xbf16, #fxmlir.device<"cuda:0">>, tensor<128x64xbf16, #fxmlir.device<"cuda:0">>, tensor<128xbf16, #fxmlir.device<"cuda:0">>) -> tensor<8x128xbf16, #fxmlir.device<"cuda:0">>
  %1 = fxmlir.aten.gelu %0 {approximate = "tanh"} : (tensor<8x128xbf16, #fxmlir.device<"cuda:0">>) -> tensor<8x128xbf16, #fxmlir.device<"cuda:0">>
  %2 = fxmlir.aten.linear %1, %w2, %b2 : (tensor<8x128xbf16, #fxmlir.device<"cuda:0">>, tensor<64x128xbf16, #fxmlir.device<"cuda:0">>, tensor<64xbf16, #fxmlir.device<"cuda:0">>) -> tensor<8x64xbf16, #fxmlir.device<"cuda:0">>
  %3 = fxmlir.aten.dropout %2 {p = 1.000000e-01 : f64, train = true} : (tensor<8x64xbf16, #fxmlir.device<"cuda:0">>) -> tensor<8x64xbf16, #fxmlir.device<"cuda:0">>
  %4 = fxmlir.aten.add.Tensor %x, %3 {alpha = 1 : i64} : (tensor<8x64xbf16, #fxmlir.device<"cuda:0">>, tensor<8x64xbf16, #fxmlir.device<"cuda:0">>) -> tensor<8x64xbf16, #fxmlir.device<"cuda:0">>
  return %4 : tensor<8x64xbf16, #fxmlir.device<"cuda:0">>
}

// The example MLP as Dynamo gives it (before autodiff) on CPU: Linear ->
// GELU -> Dropout -> Linear. The bias, the GELU and the dropout become one
// kernel; the second linear stays a linear.
// BEFORE-LABEL: func.func @mlp_dropout_after_gelu
// BEFORE: %[[H:.*]] = fxmlir.aten.linear %arg0, %arg1, %{{.*}} :
// BEFORE: %[[Y:.*]], %{{.*}} = fxmlir.fused_bias_dropout_add %[[H]], %arg2, %{{.*}} {activation = "gelu", axis = 1 : i64, p = 1.000000e-01 : f64, packed = true}
// BEFORE-NOT: fxmlir.fused_bias_act
// BEFORE-NOT: fxmlir.aten.dropout
// BEFORE: fxmlir.aten.linear %[[Y]], %arg3, %arg4
func.func @mlp_dropout_after_gelu(%x: !x, %w: !w, %b: tensor<32xf32, #fxmlir.device<"cpu">>, %w2: tensor<64x32xf32, #fxmlir.device<"cpu">>, %b2: !b) -> !x {
  %0 = fxmlir.aten.linear %x, %w, %b : (!x, !w, tensor<32xf32, #fxmlir.device<"cpu">>) -> !i
  %1 = fxmlir.aten.gelu %0 {approximate = "none"} : (!i) -> !i
  %2 = fxmlir.aten.dropout %1 {p = 1.000000e-01 : f64, train = true} : (!i) -> !i
  %3 = fxmlir.aten.linear %2, %w2, %b2 : (!i, tensor<64x32xf32, #fxmlir.device<"cpu">>, !b) -> !x
  return %3 : !x
}
