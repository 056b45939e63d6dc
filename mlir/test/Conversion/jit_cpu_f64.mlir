// f64 math has no polynomial approximation: on CPUs it calls libm, which the
// JIT resolves in the process (on CUDA devices f64 is not outlined).
//
// RUN: fxmlir-opt %s --fxmlir-jit-cpu | FileCheck %s --implicit-check-not=math.

// CHECK: llvm.func @erf(f64) -> f64
// CHECK-LABEL: llvm.func @f64_math(
// CHECK: llvm.intr.tanh(%{{.*}}) : (f64) -> f64
// CHECK: llvm.call @erf(%{{.*}}) : (f64) -> f64
func.func private @f64_math(%x: tensor<4x?xf64, #fxmlir.device<"cpu">>) -> tensor<4x?xf64, #fxmlir.device<"cpu">> {
  %0 = fxmlir.aten.tanh %x : (tensor<4x?xf64, #fxmlir.device<"cpu">>) -> tensor<4x?xf64, #fxmlir.device<"cpu">>
  %1 = fxmlir.aten.erf %0 : (tensor<4x?xf64, #fxmlir.device<"cpu">>) -> tensor<4x?xf64, #fxmlir.device<"cpu">>
  return %1 : tensor<4x?xf64, #fxmlir.device<"cpu">>
}
