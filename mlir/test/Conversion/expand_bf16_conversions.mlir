// RUN: fxmlir-opt %s --fxmlir-expand-bf16-conversions | FileCheck %s

// Conversions become bit operations; maxnumf (a vectorizable reduction
// combiner) is left alone.
// CHECK-LABEL: func.func @convert
// CHECK-NOT: arith.truncf
// CHECK-NOT: arith.extf
// CHECK: arith.shrui
// CHECK: arith.maxnumf
func.func @convert(%x: f32, %h: bf16) -> (bf16, f32, f32) {
  %0 = arith.truncf %x : f32 to bf16
  %1 = arith.extf %h : bf16 to f32
  %2 = arith.maxnumf %x, %1 : f32
  return %0, %1, %2 : bf16, f32, f32
}
