// RUN: fxmlir-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(fxmlir-fuse-row-loops))' | FileCheck %s

// A layer norm's backward in small: a sum over each row into a temporary,
// the gradient read with it at the same row, and a sum over the rows. One
// loop nest over the [2, 4] rows runs the three on each row's slices; the
// sum over the rows zeroes its output first, above the nest.
// CHECK-LABEL: func.func @row_sums_then_rows
// CHECK-SAME: (%[[X:.*]]: memref<2x4x64xf32>, %[[OUT:.*]]: memref<2x4x64xf32>, %[[COLS:.*]]: memref<64xf32>)
// CHECK: %[[T:.*]] = memref.alloc() : memref<2x4xf32>
// CHECK: %[[TV:.*]] = memref.expand_shape %[[T]]
// CHECK: linalg.fill {{.*}} outs(%[[COLS]] : memref<64xf32>)
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK: memref.subview %[[T]][%[[I]], %[[J]]] [1, 1] [1, 1]
// CHECK: linalg.fill
// CHECK: memref.subview %[[X]][%[[I]], %[[J]], 0] [1, 1, 64] [1, 1, 1]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: memref.subview %[[TV]][%[[I]], %[[J]], 0] [1, 1, 1] [1, 1, 1]
// CHECK: memref.subview %[[OUT]][%[[I]], %[[J]], 0] [1, 1, 64] [1, 1, 1]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "reduction", "parallel"]
// CHECK-SAME: outs(%[[COLS]] : memref<64xf32>)
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.fill
// CHECK: return
#x = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1)>
#row1 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#col = affine_map<(d0, d1, d2) -> (d2)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @row_sums_then_rows(%x: memref<2x4x64xf32>, %out: memref<2x4x64xf32>, %cols: memref<64xf32>) {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<2x4xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<2x4xf32>)
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<2x4x64xf32>) outs(%t : memref<2x4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %in, %acc : f32
    linalg.yield %0 : f32
  }
  %tv = memref.expand_shape %t [[0], [1, 2]] output_shape [2, 4, 1] : memref<2x4xf32> into memref<2x4x1xf32>
  linalg.generic {indexing_maps = [#x, #row1, #x], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %tv : memref<2x4x64xf32>, memref<2x4x1xf32>) outs(%out : memref<2x4x64xf32>) {
  ^bb0(%in: f32, %sum: f32, %o: f32):
    %0 = arith.subf %in, %sum : f32
    linalg.yield %0 : f32
  }
  linalg.fill ins(%zero : f32) outs(%cols : memref<64xf32>)
  linalg.generic {indexing_maps = [#x, #col], iterator_types = ["reduction", "reduction", "parallel"]}
      ins(%x : memref<2x4x64xf32>) outs(%cols : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %in, %acc : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// The second op reads the temporary the first writes across the rows
// (transposed): row (i, j) would read row (j, i) before it is written.
// CHECK-LABEL: func.func @reads_another_row
// CHECK-NOT: scf.for
#x = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#t = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
func.func @reads_another_row(%x: memref<4x4x64xf32>, %out: memref<4x4x64xf32>, %out2: memref<4x4x64xf32>) {
  linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<4x4x64xf32>) outs(%out : memref<4x4x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#t, #x], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%out : memref<4x4x64xf32>) outs(%out2 : memref<4x4x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %0 = arith.addf %in, %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// A transposed read of an input is no conflict where the function has two
// outputs: the runtime gives each a buffer of its own.
// CHECK-LABEL: func.func @two_outputs
// CHECK: scf.for
// CHECK-COUNT-2: linalg.generic
#x = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#t = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
func.func @two_outputs(%x: memref<4x4x64xf32>, %out: memref<4x4x64xf32>, %out2: memref<4x4x64xf32>) {
  %tmp = memref.alloc() : memref<4x4x64xf32>
  linalg.generic {indexing_maps = [#t, #x], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<4x4x64xf32>) outs(%tmp : memref<4x4x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#x, #x, #x], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%tmp, %tmp : memref<4x4x64xf32>, memref<4x4x64xf32>) outs(%out : memref<4x4x64xf32>) {
  ^bb0(%in: f32, %in2: f32, %o: f32):
    %0 = arith.addf %in, %in2 : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<4x4x64xf32>) outs(%out2 : memref<4x4x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

// The same with a single output, which mlir_jit_into may place in the
// input of its type: the transposed read of %x would then see rows the
// nest had already overwritten.
// CHECK-LABEL: func.func @single_output_may_be_an_input
// CHECK-NOT: scf.for
#x = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#t = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
func.func @single_output_may_be_an_input(%x: memref<4x4x64xf32>, %out: memref<4x4x64xf32>) {
  %tmp = memref.alloc() : memref<4x4x64xf32>
  linalg.generic {indexing_maps = [#t, #x], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<4x4x64xf32>) outs(%tmp : memref<4x4x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#x, #x, #x], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%tmp, %tmp : memref<4x4x64xf32>, memref<4x4x64xf32>) outs(%out : memref<4x4x64xf32>) {
  ^bb0(%in: f32, %in2: f32, %o: f32):
    %0 = arith.addf %in, %in2 : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// An op that reads its row's index (a causal mask) would count from the
// slice: not fused.
// CHECK-LABEL: func.func @row_index
// CHECK-NOT: scf.for
#x = affine_map<(d0, d1) -> (d0, d1)>
func.func @row_index(%x: memref<8x64xf32>, %out: memref<8x64xf32>, %out2: memref<8x64xf32>) {
  linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x64xf32>) outs(%out : memref<8x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %keep = arith.cmpi ule, %j, %i : index
    %zero = arith.constant 0.0 : f32
    %0 = arith.select %keep, %in, %zero : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel"]}
      ins(%out : memref<8x64xf32>) outs(%out2 : memref<8x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// A body that loads from a buffer (a gather) reads rows its operands do
// not name: not fused.
// CHECK-LABEL: func.func @gather
// CHECK-NOT: scf.for
#x = affine_map<(d0, d1) -> (d0, d1)>
func.func @gather(%table: memref<8x64xf32>, %rows: memref<8x64xindex>, %out: memref<8x64xf32>, %out2: memref<8x64xf32>) {
  linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel"]}
      ins(%rows : memref<8x64xindex>) outs(%out : memref<8x64xf32>) {
  ^bb0(%row: index, %o: f32):
    %j = linalg.index 1 : index
    %0 = memref.load %table[%row, %j] : memref<8x64xf32>
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel"]}
      ins(%out : memref<8x64xf32>) outs(%out2 : memref<8x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// Rows of 8 elements leave the vector loops too little: not fused.
// CHECK-LABEL: func.func @short_rows
// CHECK-NOT: scf.for
#x = affine_map<(d0, d1) -> (d0, d1)>
func.func @short_rows(%x: memref<64x8xf32>, %out: memref<64x8xf32>, %out2: memref<64x8xf32>) {
  linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x8xf32>) outs(%out : memref<64x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel"]}
      ins(%out : memref<64x8xf32>) outs(%out2 : memref<64x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// Dynamic rows (the JIT's batch dim): the nest runs to the first op's dim.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK-SAME: (%[[X:[^:]*]]: memref<?x64xf32>
// CHECK: %[[N:.*]] = memref.dim %[[X]], %{{.*}}
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[N]] step
// CHECK-COUNT-2: linalg.generic
#x = affine_map<(d0, d1) -> (d0, d1)>
func.func @dynamic_rows(%x: memref<?x64xf32>, %out: memref<?x64xf32>, %out2: memref<?x64xf32>) {
  linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x64xf32>) outs(%out : memref<?x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel"]}
      ins(%out : memref<?x64xf32>) outs(%out2 : memref<?x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  }
  return
}
