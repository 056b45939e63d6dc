// RUN: fxmlir-opt %s --mlir-print-local-scope \
// RUN:   --pass-pipeline='builtin.module(func.func(fxmlir-gpu-column-reductions))' | FileCheck %s

#in = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A column sum (a bias gradient) of dynamic rows: a block per 16 columns
// (96 / 16 = 6), 16 x 32 threads, each thread every 32nd row of its column,
// loads at (row, column); the 32 partial sums of a column meet in shared
// memory, and its first thread adds them to the output.
// CHECK-LABEL: func.func @column_sum
// CHECK-DAG: %[[C6:.*]] = arith.constant 6 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C6]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%[[TX:.*]], %[[TY:.*]], %{{.*}}) in (%{{.*}} = %[[C16]], %{{.*}} = %[[C32]], %{{.*}} = %{{.*}}) workgroup(%[[PARTIALS:.*]] : memref<32x16xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[COLUMN:.*]] = arith.addi %{{.*}}, %[[TX]] : index
// CHECK: %[[IN_RANGE:.*]] = arith.cmpi ult, %[[COLUMN]], %[[C96:.*]] : index
// CHECK: %[[SHARE:.*]] = scf.if %[[IN_RANGE]] -> (f32) {
// CHECK: scf.for %[[ROW:.*]] = %[[TY]] to %{{.*}} step %[[C32]] iter_args(
// CHECK: memref.load %{{.*}}[%[[ROW]], %[[COLUMN]]] : memref<?x96xf32>
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: } else {
// CHECK: memref.store %[[SHARE]], %[[PARTIALS]][%[[TY]], %[[TX]]]
// CHECK-NEXT: gpu.barrier
// CHECK: scf.if
// CHECK: scf.for
// CHECK: memref.load %[[PARTIALS]]
// CHECK: %[[INITIAL:.*]] = memref.load %arg1[%[[COLUMN]]] : memref<96xf32>
// CHECK: %[[FOLDED:.*]] = arith.addf %{{.*}}, %[[INITIAL]]
// CHECK: memref.store %[[FOLDED]], %arg1[%[[COLUMN]]] : memref<96xf32>
// CHECK: gpu.terminator
// CHECK-NOT: linalg.generic
func.func @column_sum(%x: memref<?x96xf32>, %out: memref<96xf32>) {
  linalg.generic {indexing_maps = [#in, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<?x96xf32>) outs(%out : memref<96xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.mulf %in, %in : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// Two reduced dims before the column (a bias gradient of [B, T, C]): the
// flat reduced index is split into (b, t); 40 columns take 3 blocks.
// CHECK-LABEL: func.func @batch_and_time_max
// CHECK: gpu.launch blocks(%{{.*}}) in (%{{.*}} = %c3
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: scf.for %[[FLAT:.*]] = %{{.*}} to %c32{{.*}} step %c32
// CHECK: %[[T:.*]] = arith.remui %[[FLAT]], %c8
// CHECK: %[[B:.*]] = arith.divui %[[FLAT]], %c8
// CHECK: memref.load %{{.*}}[%{{.*}}, %[[T]], %{{.*}}] : memref<4x8x40xf32>
// CHECK: arith.maxnumf
func.func @batch_and_time_max(%x: memref<4x8x40xf32>, %out: memref<40xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                   affine_map<(d0, d1, d2) -> (d2)>],
                  iterator_types = ["reduction", "reduction", "parallel"]}
      ins(%x : memref<4x8x40xf32>) outs(%out : memref<40xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.maxnumf %in, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// An outer parallel dim (a sum over T of [B, T, C] into [B, C]): blocks
// cover B x column blocks (4 x 3), the block's b from its id.
// CHECK-LABEL: func.func @time_sum
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c12
// CHECK: %[[B:.*]] = arith.divui %[[BX]], %c3
// CHECK: memref.store %{{.*}}, %arg1[%[[B]], %{{.*}}] : memref<4x40xf32>
func.func @time_sum(%x: memref<4x8x40xf32>, %out: memref<4x40xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                   affine_map<(d0, d1, d2) -> (d0, d2)>],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : memref<4x8x40xf32>) outs(%out : memref<4x40xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// Not taken: a row sum (the reduction innermost: a row reduction's), an
// input read transposed (its rows innermost: coalesced as a row
// reduction), a body without one combining op.
// CHECK-LABEL: func.func @not_columns
// CHECK-NOT: gpu.launch
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: gpu.launch
func.func @not_columns(%x: memref<8x64xf32>, %t: memref<64x8xf32>, %sum: memref<8xf32>,
                       %colsum: memref<64xf32>) {
  linalg.generic {indexing_maps = [#in, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x64xf32>) outs(%sum : memref<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, #col],
                  iterator_types = ["reduction", "parallel"]}
      ins(%t : memref<64x8xf32>) outs(%colsum : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#in, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<8x64xf32>) outs(%colsum : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.mulf %acc, %acc : f32
    %s = arith.addf %in, %m : f32
    linalg.yield %s : f32
  }
  return
}

// The output filled just before (the reduction's accumulator): the block
// stores its total where it would add it to the loaded zero, and the fill,
// a kernel launch, is gone. Filled with another value, it adds the value.
// A fill of an output read before the reduction stays, and is loaded.
// CHECK-LABEL: func.func @filled_outputs
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch
// CHECK: gpu.barrier
// CHECK: %[[TOTAL:.*]] = scf.for
// CHECK-NOT: memref.load %arg1[
// CHECK: memref.store %[[TOTAL]], %arg1[
// CHECK: gpu.launch
// CHECK: gpu.barrier
// CHECK: %[[TOTAL2:.*]] = scf.for
// CHECK-NOT: memref.load %arg2[
// CHECK: %[[PLUS:.*]] = arith.addf %[[TOTAL2]], %cst
// CHECK: memref.store %[[PLUS]], %arg2[
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg3 : memref<96xf32>)
// CHECK: memref.copy %arg3, %arg4
// CHECK: gpu.launch
// CHECK: memref.load %arg3[
func.func @filled_outputs(%x: memref<?x96xf32>, %out: memref<96xf32>, %shifted: memref<96xf32>,
                          %read: memref<96xf32>, %copy: memref<96xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<96xf32>)
  linalg.generic {indexing_maps = [#in, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<?x96xf32>) outs(%out : memref<96xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%one : f32) outs(%shifted : memref<96xf32>)
  linalg.generic {indexing_maps = [#in, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<?x96xf32>) outs(%shifted : memref<96xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%read : memref<96xf32>)
  memref.copy %read, %copy : memref<96xf32> to memref<96xf32>
  linalg.generic {indexing_maps = [#in, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<?x96xf32>) outs(%read : memref<96xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  return
}
