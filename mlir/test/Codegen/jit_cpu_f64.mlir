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

// f64 <-> bf16/f16 conversions go through f32 (as eager's do), which LLVM
// converts inline, so the JIT links no compiler-rt __truncdfbf2,
// __truncdfhf2 or __extendhfdf2.
// CHECK-LABEL: llvm.func @f64_to_16_bit(
// CHECK-NOT: f64 to bf16
// CHECK-NOT: f64 to f16
// CHECK-NOT: f16 to f64
// CHECK: llvm.fptrunc %{{.*}} : f64 to f32
// CHECK: llvm.fptrunc %{{.*}} : f64 to f32
// CHECK: llvm.fptrunc %{{.*}} : f32 to f16
// CHECK: llvm.fpext %{{.*}} : f16 to f32
// CHECK: llvm.fpext %{{.*}} : f32 to f64
// CHECK-NOT: f64 to bf16
// CHECK-NOT: f64 to f16
// CHECK-NOT: f16 to f64
func.func private @f64_to_16_bit(%x: tensor<4x?xf64, #fxmlir.device<"cpu">>) -> (tensor<4x?xbf16, #fxmlir.device<"cpu">>, tensor<4x?xf64, #fxmlir.device<"cpu">>) {
  %0 = fxmlir.aten._to_copy %x {dtype = bf16, non_blocking = false} : (tensor<4x?xf64, #fxmlir.device<"cpu">>) -> tensor<4x?xbf16, #fxmlir.device<"cpu">>
  %1 = fxmlir.aten._to_copy %x {dtype = f16, non_blocking = false} : (tensor<4x?xf64, #fxmlir.device<"cpu">>) -> tensor<4x?xf16, #fxmlir.device<"cpu">>
  %2 = fxmlir.aten._to_copy %1 {dtype = f64, non_blocking = false} : (tensor<4x?xf16, #fxmlir.device<"cpu">>) -> tensor<4x?xf64, #fxmlir.device<"cpu">>
  return %0, %2 : tensor<4x?xbf16, #fxmlir.device<"cpu">>, tensor<4x?xf64, #fxmlir.device<"cpu">>
}
