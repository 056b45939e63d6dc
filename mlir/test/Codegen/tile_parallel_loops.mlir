// RUN: fxmlir-opt %s --pass-pipeline='builtin.module(func.func(fxmlir-tile-parallel-loops{block-size=128}))' | FileCheck %s

// The last dim is tiled by the block size, the others by 1, without min/max
// bounds: the inner loop spans a whole block and checks the bound instead.
// CHECK-LABEL: func.func @tile
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK-DAG: %[[STEP0:.*]] = arith.muli %c1, %c1{{.*}} : index
// CHECK-DAG: %[[STEP1:.*]] = arith.muli %c1, %[[C128]] : index
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}}) step (%[[STEP0]], %[[STEP1]])
// CHECK-NEXT: scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%[[STEP0]], %[[STEP1]])
// CHECK-NOT: affine.min
// CHECK: scf.if
func.func @tile(%m: memref<?x?xf32>, %n0: index, %n1: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%n0, %n1) step (%c1, %c1) {
    memref.store %zero, %m[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return
}
