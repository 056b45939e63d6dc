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

// The log approximation reads the exponent field: subnormal x is scaled
// by 2^24 first and 24 ln 2 taken off (log(2^-128) was -87.7, not -88.7).
// f64 log (libm) is left alone.
// CHECK-LABEL: func.func @subnormal_log
// CHECK-SAME: (%[[X:.*]]: f32, %[[D:.*]]: f64)
// CHECK-DAG: %[[MIN:.*]] = arith.constant 1.17549435E-38 : f32
// CHECK-DAG: %[[SCALE:.*]] = arith.constant 0x4B800000 : f32
// CHECK-DAG: %[[LN:.*]] = arith.constant 16.6355324 : f32
// CHECK-DAG: %[[SUB:.*]] = arith.cmpf olt, %[[X]], %[[MIN]] : f32
// CHECK-DAG: %[[SCALED:.*]] = arith.mulf %[[X]], %[[SCALE]] : f32
// CHECK-DAG: arith.select %[[SUB]], %[[SCALED]], %[[X]] : f32
// CHECK: %[[CORRECTION:.*]] = arith.select %[[SUB]], %[[LN]], %{{.*}} : f32
// CHECK: arith.subf %{{.*}}, %[[CORRECTION]] : f32
// CHECK: math.log %[[D]] : f64
// CHECK-NOT: arith.cmpf olt, %[[D]]
func.func @subnormal_log(%x: f32, %d: f64) -> (f32, f64) {
  %0 = math.log %x : f32
  %1 = math.log %d : f64
  return %0, %1 : f32, f64
}
