// RUN: fxmlir-opt %s --pass-pipeline='builtin.module(func.func(fxmlir-tile-parallel-loops{block-size=128}))' | FileCheck %s

// A loop of any rank becomes one dim over all its elements, tiled by the
// block size without min/max bounds: the inner loop spans a whole block and
// checks the bound instead; the last dim is the remainder, so consecutive
// threads touch consecutive elements.
// CHECK-LABEL: func.func @tile
// CHECK-SAME: %[[M:.*]]: memref<?x?xf32>, %[[N0:.*]]: index, %[[N1:.*]]: index
// CHECK: %[[TOTAL:.*]] = arith.muli %{{.*}}, %[[N1]] : index
// CHECK: %[[C128:.*]] = arith.constant 128 : index
// CHECK: %[[STEP:.*]] = arith.muli %{{.*}}, %[[C128]] : index
// CHECK: scf.parallel (%[[BLOCK:.*]]) = (%{{.*}}) to (%[[TOTAL]]) step (%[[STEP]])
// CHECK-NEXT: scf.parallel (%[[THREAD:.*]]) = (%{{.*}}) to (%[[STEP]])
// CHECK-NOT: affine.min
// CHECK: %[[I:.*]] = arith.addi %[[THREAD]], %[[BLOCK]]
// CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %[[TOTAL]]
// CHECK: scf.if
// CHECK-DAG: %[[J:.*]] = arith.remsi %[[I]], %[[N1]]
// CHECK-DAG: %[[ROW:.*]] = arith.divsi %[[I]], %[[N1]]
// CHECK: memref.store %{{.*}}, %[[M]][%[[ROW]], %[[J]]]
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

// Rank 3 with a last dim of 1 (layer norm's statistics [8, 512, 1]): one
// dim of 8 * 512 * 1 elements. Tiled dim by dim, its threads went on z (at
// most 64 there) and each element took a block of 128 threads.
// CHECK-LABEL: func.func @rank3
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C512:.*]] = arith.constant 512 : index
// CHECK: %[[N:.*]] = arith.muli %{{.*}}, %[[C8]]
// CHECK: %[[NM:.*]] = arith.muli %[[N]], %[[C512]]
// CHECK: %[[TOTAL:.*]] = arith.muli %[[NM]], %{{.*}}
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[TOTAL]]) step
// CHECK-NEXT: scf.parallel (%{{.*}}) = (%{{.*}}) to
func.func @rank3(%m: memref<8x512x1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c512 = arith.constant 512 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%c8, %c512, %c1) step (%c1, %c1, %c1) {
    memref.store %zero, %m[%i, %j, %k] : memref<8x512x1xf32>
    scf.reduce
  }
  return
}

// A loop with a reduction is left as it is, like upstream tiling does.
// CHECK-LABEL: func.func @reduction
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}}) step (%{{.*}}, %{{.*}}) init
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @reduction(%m: memref<4x4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c4) step (%c1, %c1) init (%zero) -> f32 {
    %x = memref.load %m[%i, %j] : memref<4x4xf32>
    scf.reduce(%x : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  return %sum : f32
}
