// RUN: fxmlir-opt %s --fxmlir-math-to-llvm-intrinsics | FileCheck %s

// CHECK-LABEL: func.func @native
// CHECK: llvm.call_intrinsic "llvm.sqrt"(%{{.*}}) : (f32) -> f32
// CHECK: llvm.call_intrinsic "llvm.floor"(%{{.*}}) : (f32) -> f32
// CHECK: llvm.call_intrinsic "llvm.fabs"(%{{.*}}) : (f64) -> f64
// CHECK: llvm.call_intrinsic "llvm.fma"(%{{.*}}, %{{.*}}, %{{.*}}) : (f32, f32, f32) -> f32
// CHECK: llvm.call_intrinsic "llvm.copysign"(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// CHECK: llvm.call_intrinsic "llvm.maxnum"(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// Vectors and the rest of math are left alone.
// CHECK: math.sqrt %{{.*}} : vector<4xf32>
// CHECK: math.exp
func.func @native(%x: f32, %d: f64, %v: vector<4xf32>) -> (f32, f32, f64, f32, f32, f32, vector<4xf32>, f32) {
  %0 = math.sqrt %x : f32
  %1 = math.floor %x : f32
  %2 = math.absf %d : f64
  %3 = math.fma %x, %x, %x : f32
  %4 = math.copysign %x, %x : f32
  %m = arith.maxnumf %x, %1 : f32
  %5 = math.sqrt %v : vector<4xf32>
  %6 = math.exp %x : f32
  return %0, %1, %2, %3, %4, %m, %5, %6 : f32, f32, f64, f32, f32, f32, vector<4xf32>, f32
}
