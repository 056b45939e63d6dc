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

// f64 and integers reach f16/bf16 through f32 (the rounding eager does, and
// no compiler-rt call); f16/bf16 reach f64 through f32 (exact).
// CHECK-LABEL: func.func @through_f32
// CHECK-SAME: (%[[D:.*]]: f64, %[[I:.*]]: i32, %[[H:.*]]: f16)
// CHECK-NOT: f64 to bf16
// CHECK-NOT: f64 to f16
// CHECK-NOT: i32 to bf16
// CHECK-NOT: f16 to f64
// CHECK: arith.truncf %[[D]] : f64 to f32
// CHECK: arith.shrui
// CHECK: %[[DF:.*]] = arith.truncf %[[D]] : f64 to f32
// CHECK: arith.truncf %[[DF]] : f32 to f16
// CHECK: arith.sitofp %[[I]] : i32 to f32
// CHECK: arith.uitofp %[[I]] : i32 to f32
// CHECK: %[[HF:.*]] = arith.extf %[[H]] : f16 to f32
// CHECK: arith.extf %[[HF]] : f32 to f64
// CHECK-NOT: f64 to bf16
// CHECK-NOT: f64 to f16
// CHECK-NOT: i32 to bf16
// CHECK-NOT: f16 to f64
func.func @through_f32(%d: f64, %i: i32, %h: f16) -> (bf16, f16, bf16, f16, f64) {
  %0 = arith.truncf %d : f64 to bf16
  %1 = arith.truncf %d : f64 to f16
  %2 = arith.sitofp %i : i32 to bf16
  %3 = arith.uitofp %i : i32 to f16
  %4 = arith.extf %h : f16 to f64
  return %0, %1, %2, %3, %4 : bf16, f16, bf16, f16, f64
}

// Negative: f32 <-> f16 stays (LLVM converts it inline).
// CHECK-LABEL: func.func @f16_stays
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: arith.extf %{{.*}} : f16 to f32
func.func @f16_stays(%x: f32, %h: f16) -> (f16, f32) {
  %0 = arith.truncf %x : f32 to f16
  %1 = arith.extf %h : f16 to f32
  return %0, %1 : f16, f32
}

// A select of bf16 or f16 values (the truncation's NaN, a where on 16-bit
// floats) selects their bits: no 16-bit float select for LLVM to promote
// through f32 and a compiler-rt call.
// CHECK-LABEL: func.func @select_bits
// CHECK-SAME: (%[[C:.*]]: i1, %[[A:.*]]: bf16, %[[B:.*]]: bf16, %[[X:.*]]: f16, %[[Y:.*]]: f16)
// CHECK-DAG: %[[AI:.*]] = arith.bitcast %[[A]] : bf16 to i16
// CHECK-DAG: %[[BI:.*]] = arith.bitcast %[[B]] : bf16 to i16
// CHECK: %[[S:.*]] = arith.select %[[C]], %[[AI]], %[[BI]] : i16
// CHECK: arith.bitcast %[[S]] : i16 to bf16
// CHECK: arith.select %[[C]], %{{.*}}, %{{.*}} : i16
// CHECK: arith.bitcast %{{.*}} : i16 to f16
// CHECK-NOT: arith.select {{.*}} : bf16
// CHECK-NOT: arith.select {{.*}} : f16
func.func @select_bits(%c: i1, %a: bf16, %b: bf16, %x: f16, %y: f16) -> (bf16, f16) {
  %0 = arith.select %c, %a, %b : bf16
  %1 = arith.select %c, %x, %y : f16
  return %0, %1 : bf16, f16
}
