// RUN: fxmlir-opt %s --fxmlir-approximate-gelu | FileCheck %s
// RUN: fxmlir-opt %s --fxmlir-approximate-gelu --fxmlir-decompose --fxmlir-fuse-gemm-epilogues | FileCheck %s --check-prefix=FUSED

!x = tensor<8x64xbf16, #fxmlir.device<"cuda:0">>
!w = tensor<128x64xbf16, #fxmlir.device<"cuda:0">>
!b = tensor<128xbf16, #fxmlir.device<"cuda:0">>
!y = tensor<8x128xbf16, #fxmlir.device<"cuda:0">>

// Opt-in: erf GELU and its gradient become the tanh form, which then
// fuses into the matmul on CUDA.
// CHECK-LABEL: func.func @erf
// CHECK: fxmlir.aten.gelu %{{.*}} {approximate = "tanh"}
// CHECK: fxmlir.aten.gelu_backward %arg3, %{{.*}} {approximate = "tanh"}
// CHECK: fxmlir.aten.gelu %{{.*}} {approximate = "tanh"}
// CHECK-NOT: "none"
// FUSED-LABEL: func.func @erf
// FUSED: fxmlir.fused_linear_gelu %arg0, %arg1, %arg2 {approximate = "tanh"}
func.func @erf(%x: !x, %w: !w, %b: !b, %g: !y, %v: !y) -> (!y, !y, !y) {
  %0 = fxmlir.aten.linear %x, %w, %b : (!x, !w, !b) -> !y
  %1 = fxmlir.aten.gelu %0 {approximate = "none"} : (!y) -> !y
  %2 = fxmlir.aten.gelu_backward %g, %v {approximate = "none"} : (!y, !y) -> !y
  %3 = fxmlir.aten.gelu %v {approximate = "tanh"} : (!y) -> !y
  return %1, %2, %3 : !y, !y, !y
}
