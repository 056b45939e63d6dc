// RUN: fxmlir-opt %s --mlir-print-local-scope \
// RUN:   --pass-pipeline='builtin.module(func.func(fxmlir-gpu-reductions-innermost))' | FileCheck %s
// RUN: fxmlir-opt %s \
// RUN:   --pass-pipeline='builtin.module(func.func(fxmlir-gpu-reductions-innermost,fxmlir-gpu-row-reductions))' \
// RUN:   | FileCheck %s --check-prefix=MAPPED

#in = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// A column sum (a bias gradient): the reduction loop moves inside, the
// input read transposed; the row-reduction mapping then takes it, where
// before a host loop over the rows launched a kernel per row.
// CHECK-LABEL: func.func @column_sum
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
// CHECK: arith.mulf
// CHECK: arith.addf
// MAPPED-LABEL: func.func @column_sum
// MAPPED-NOT: scf.for
// MAPPED: gpu.launch
// MAPPED: gpu.all_reduce add
// MAPPED-NOT: linalg.generic
// MAPPED-LABEL: func.func @batch_and_time_sum
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

// Two reduced dims around a parallel one (a bias gradient of [B, T, C]):
// the parallel loop first, the reductions after it in their order.
// CHECK-LABEL: func.func @batch_and_time_sum
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2, d0)>, affine_map<(d0, d1, d2) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction"]}
func.func @batch_and_time_sum(%x: memref<4x8x32xf32>, %out: memref<32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                   affine_map<(d0, d1, d2) -> (d2)>],
                  iterator_types = ["reduction", "reduction", "parallel"]}
      ins(%x : memref<4x8x32xf32>) outs(%out : memref<32xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// Reductions already innermost and elementwise ops keep their loops.
// CHECK-LABEL: func.func @row_sum_and_scale
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
func.func @row_sum_and_scale(%x: memref<8x64xf32>, %sum: memref<8xf32>, %y: memref<8x64xf32>) {
  linalg.generic {indexing_maps = [#in, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x64xf32>) outs(%sum : memref<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#in, #in], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x64xf32>) outs(%y : memref<8x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  }
  return
}
