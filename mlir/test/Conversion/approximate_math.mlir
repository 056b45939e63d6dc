// RUN: fxmlir-opt %s --fxmlir-approximate-math | FileCheck %s

// f32 and bf16 transcendental functions become arithmetic (bf16 through
// f32); powf goes through exp and log first; f64 and sqrt stay.
// CHECK-LABEL: func.func @approximate
// CHECK-NOT: math.exp
// CHECK-NOT: math.tanh
// CHECK-NOT: math.erf
// CHECK-NOT: math.log
// CHECK-NOT: math.powf
// CHECK: math.fma
// CHECK: math.tanh %{{.*}} : f64
// CHECK: math.sqrt %{{.*}} : f32
func.func @approximate(%x: f32, %h: bf16, %d: f64) -> (f32, f32, bf16, f32, f32, f64, f32) {
  %0 = math.exp %x : f32
  %1 = math.tanh %x : f32
  %2 = math.erf %h : bf16
  %3 = math.log %x : f32
  %4 = math.powf %x, %x : f32
  %5 = math.tanh %d : f64
  %6 = math.sqrt %x : f32
  return %0, %1, %2, %3, %4, %5, %6 : f32, f32, bf16, f32, f32, f64, f32
}
