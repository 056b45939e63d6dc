// A stage's pipeline with options chooses its passes as FXMLIR_PASSES and
// passes= do (the round trip runs exactly these pipelines): passes added
// and removed, or only some; JIT regions on the device types asked for, and
// never before autodiff.
// RUN: fxmlir-opt %s --pass-pipeline="builtin.module(fxmlir-forward)" | FileCheck %s --check-prefix=DEFAULT
// RUN: fxmlir-opt %s --pass-pipeline="builtin.module(fxmlir-forward{remove=fxmlir-outline-jit-regions,fxmlir-fuse-bias-add-activation})" | FileCheck %s --check-prefix=REMOVED
// RUN: fxmlir-opt %s --pass-pipeline="builtin.module(fxmlir-backward{only=fxmlir-outline-jit-regions})" | FileCheck %s --check-prefix=ONLY
// RUN: fxmlir-opt %s --pass-pipeline="builtin.module(fxmlir-before-autodiff{add=fxmlir-outline-jit-regions,fxmlir-eager-random})" | FileCheck %s --check-prefix=BEFORE
// RUN: fxmlir-opt %s --pass-pipeline="builtin.module(fxmlir-forward{region-device-types=cuda})" | FileCheck %s --check-prefix=CUDA

!x = tensor<64x256xf32, #fxmlir.device<"cpu">>
!b = tensor<256xf32, #fxmlir.device<"cpu">>

// DEFAULT-LABEL: func.func @bias_gelu_then_tanh_chain
// DEFAULT: fxmlir.fused_bias_act %arg0, %arg1
// DEFAULT-NEXT: fxmlir.mlir_jit @jit_tanh_mul(%arg2)
// DEFAULT-NEXT: return
// REMOVED-LABEL: func.func @bias_gelu_then_tanh_chain
// REMOVED-NOT: fxmlir.fused_bias_act
// REMOVED-NOT: fxmlir.mlir_jit
// REMOVED: fxmlir.aten.gelu
// REMOVED-NOT: fxmlir.mlir_jit
// REMOVED: return
// ONLY-LABEL: func.func @bias_gelu_then_tanh_chain
// ONLY-NEXT: fxmlir.mlir_jit @jit_add_gelu(%arg0, %arg1)
// ONLY-NEXT: fxmlir.mlir_jit @jit_tanh_mul(%arg2)
// BEFORE-LABEL: func.func @bias_gelu_then_tanh_chain
// BEFORE: fxmlir.fused_bias_act
// BEFORE-NOT: fxmlir.mlir_jit
// CUDA-LABEL: func.func @bias_gelu_then_tanh_chain
// CUDA-NOT: fxmlir.mlir_jit
func.func @bias_gelu_then_tanh_chain(%x: !x, %b: !b, %y: !x) -> (!x, !x) {
  %0 = fxmlir.aten.add.Tensor %x, %b {alpha = 1 : i64} : (!x, !b) -> !x
  %1 = fxmlir.aten.gelu %0 {approximate = "none"} : (!x) -> !x
  %2 = fxmlir.aten.tanh %y : (!x) -> !x
  %3 = fxmlir.aten.mul.Tensor %2, %y : (!x, !x) -> !x
  %4 = fxmlir.aten.tanh %3 : (!x) -> !x
  %5 = fxmlir.aten.mul.Tensor %4, %2 : (!x, !x) -> !x
  return %1, %5 : !x, !x
}
