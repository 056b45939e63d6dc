// RUN: fxmlir-opt %s --pass-pipeline='builtin.module(func.func(fxmlir-gpu-row-reductions{block-size=128}))' | FileCheck %s

#in = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// A row sum: one block per row, of as many whole warps as the row of 64
// needs (2, below the 128 allowed), each thread folding a strided part of
// the row; the block's sum is folded into the output by thread 0.
// CHECK-LABEL: func.func @row_sum
// CHECK-SAME: (%[[X:.*]]: memref<?x64xf32>, %[[OUT:.*]]: memref<?xf32>)
// CHECK-DAG: %[[ROWS:.*]] = memref.dim %[[X]], %c0
// CHECK: gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%[[T:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[THREADS:c64(_[0-9]+)?]],
// CHECK: %[[ROW:.*]] = arith.remui %[[B]], %[[ROWS]]
// CHECK: %[[PART:.*]] = scf.for %[[J:.*]] = %[[T]] to %{{.*}} step %[[THREADS]] iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32)
// CHECK: %[[V:.*]] = memref.load %[[X]][%[[ROW]], %[[J]]]
// CHECK: %[[E:.*]] = math.exp %[[V]]
// CHECK: arith.addf %[[E]], %[[ACC]]
// CHECK: %[[TOTAL:.*]] = gpu.all_reduce add %[[PART]] uniform
// CHECK: scf.if
// CHECK: %[[INIT:.*]] = memref.load %[[OUT]][%[[ROW]]]
// CHECK: %[[SUM:.*]] = arith.addf %[[TOTAL]], %[[INIT]]
// CHECK: memref.store %[[SUM]], %[[OUT]][%[[ROW]]]
// CHECK-NOT: linalg.generic
func.func @row_sum(%x: memref<?x64xf32>, %out: memref<?xf32>) {
  linalg.generic {indexing_maps = [#in, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x64xf32>) outs(%out : memref<?xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %e = math.exp %in : f32
    %s = arith.addf %e, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// A max keeps its NaN semantics (maximumf, starting from -inf).
// CHECK-LABEL: func.func @row_max
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: gpu.all_reduce maximumf
func.func @row_max(%x: memref<8x64xf32>, %out: memref<8xf32>) {
  linalg.generic {indexing_maps = [#in, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x64xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %in, %acc : f32
    linalg.yield %m : f32
  }
  return
}

// Long rows take `block-size` threads; rows of unknown length the warps
// they need, capped at it.
// CHECK-LABEL: func.func @row_lengths
// CHECK: threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c128{{(_[0-9]+)?}},
// CHECK: %[[N:.*]] = memref.dim %{{.*}}, %c1
// CHECK: %[[ATLEAST1:.*]] = arith.maxui %[[N]], %c1
// CHECK: %[[WARPS:.*]] = arith.ceildivui %[[ATLEAST1]], %[[C32:c32(_[0-9]+)?]]
// CHECK: %[[WHOLE:.*]] = arith.muli %[[WARPS]], %[[C32]]
// CHECK: %[[THREADS:.*]] = arith.minui %[[WHOLE]], %c128
// CHECK: threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[THREADS]],
func.func @row_lengths(%long: memref<8x1000xf32>, %any: memref<8x?xf32>, %out: memref<8xf32>) {
  linalg.generic {indexing_maps = [#in, #row], iterator_types = ["parallel", "reduction"]}
      ins(%long : memref<8x1000xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#in, #row], iterator_types = ["parallel", "reduction"]}
      ins(%any : memref<8x?xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// Reductions over leading dims (bias gradients) and bodies that use the
// accumulator twice are left to the parallel-loop mapping.
// CHECK-LABEL: func.func @not_rows
// CHECK-NOT: gpu.launch
// CHECK-COUNT-2: linalg.generic
func.func @not_rows(%x: memref<8x64xf32>, %cols: memref<64xf32>, %out: memref<8xf32>) {
  linalg.generic {indexing_maps = [#in, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<8x64xf32>) outs(%cols : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#in, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x64xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %p = arith.mulf %in, %acc : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// A row max into an output filled with -inf just before: thread 0 stores
// the block's max (no load), and the fill's kernel is gone.
// CHECK-LABEL: func.func @filled_row_max
// CHECK-NOT: linalg.fill
// CHECK: %[[TOTAL:.*]] = gpu.all_reduce maximumf
// CHECK: scf.if
// CHECK-NOT: memref.load %arg1[
// CHECK: memref.store %[[TOTAL]], %arg1[
func.func @filled_row_max(%x: memref<8x64xf32>, %out: memref<8xf32>) {
  %low = arith.constant 0xFF800000 : f32
  linalg.fill ins(%low : f32) outs(%out : memref<8xf32>)
  linalg.generic {indexing_maps = [#in, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x64xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %in, %acc : f32
    linalg.yield %m : f32
  }
  return
}
