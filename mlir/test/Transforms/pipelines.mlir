// The per-stage pipelines, registered by name. After autodiff, bias_add +
// dropout fuses too; before autodiff (where Dynamo's dropout is a Python call,
// never native_dropout) that pass is not in the pipeline.
// RUN: fxmlir-opt %s --pass-pipeline="builtin.module(fxmlir-forward)" | FileCheck %s --check-prefix=AFTER
// RUN: fxmlir-opt %s --fxmlir-backward | FileCheck %s --check-prefix=AFTER
// RUN: fxmlir-opt %s --fxmlir-inference | FileCheck %s --check-prefix=AFTER
// RUN: fxmlir-opt %s --fxmlir-before-autodiff | FileCheck %s --check-prefix=BEFORE
// RUN: not fxmlir-opt %s --pass-pipeline="builtin.module(fxmlir-forward{x=1})" 2>&1 | FileCheck %s --check-prefix=OPTIONS

!x = tensor<8x64xf32, #fxmlir.device<"cpu">>
!b = tensor<64xf32, #fxmlir.device<"cpu">>
!w = tensor<32x64xf32, #fxmlir.device<"cpu">>
!i = tensor<8x32xf32, #fxmlir.device<"cpu">>

// AFTER-LABEL: func.func @mlp
// AFTER: fxmlir.fused_bias_add_gelu
// AFTER: fxmlir.random_mask_like
// AFTER: fxmlir.fused_bias_add_mask_scale
// AFTER-NOT: fxmlir.bias_add
// BEFORE-LABEL: func.func @mlp
// BEFORE: fxmlir.fused_bias_add_gelu
// BEFORE: fxmlir.aten.addmm
// BEFORE: fxmlir.aten.native_dropout
// OPTIONS: fxmlir's pipelines take no options
func.func @mlp(%x: !i, %w: !w, %b: !b, %w2: !w, %b2: !b) -> (!x, !x, tensor<8x64xi1, #fxmlir.device<"cpu">>) {
  %0 = fxmlir.aten.addmm %b, %x, %w {alpha = 1 : i64, beta = 1 : i64} : (!b, !i, !w) -> !x
  %1 = fxmlir.aten.gelu %0 {approximate = "none"} : (!x) -> !x
  %2 = fxmlir.aten.addmm %b2, %x, %w2 {alpha = 1 : i64, beta = 1 : i64} : (!b, !i, !w) -> !x
  %3:2 = fxmlir.aten.native_dropout %2 {p = 1.000000e-01 : f64, train = true} : (!x) -> (!x, tensor<8x64xi1, #fxmlir.device<"cpu">>)
  return %1, %3#0, %3#1 : !x, !x, tensor<8x64xi1, #fxmlir.device<"cpu">>
}
