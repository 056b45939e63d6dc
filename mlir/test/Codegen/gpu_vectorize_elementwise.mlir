// RUN: fxmlir-opt %s --pass-pipeline='builtin.module(func.func(fxmlir-gpu-vectorize-elementwise{block-size=128},canonicalize))' | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// f32: a thread per 4 elements of the last dim (ceil(n/4) x rows threads),
// a vector path taken when n % 4 == 0 and every pointer is 16-byte aligned,
// with one aligned vector<4xf32> load per contiguous input (the bias row
// too) and one store; the row statistic is loaded once; the body is cloned
// per element. Otherwise a scalar loop over the thread's elements.
// CHECK-LABEL: func.func @add_bias_scale
// CHECK-SAME: (%[[X:.*]]: memref<?x?xf32>, %[[B:.*]]: memref<?xf32>, %[[S:.*]]: memref<?x1xf32>, %[[OUT:.*]]: memref<?x?xf32>)
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK-DAG: %[[N:.*]] = memref.dim %[[X]], %c1
// CHECK: %[[GROUPS:.*]] = arith.ceildivui %[[N]], %[[C4]]
// CHECK: %[[TOTAL:.*]] = arith.muli %[[GROUPS]]
// CHECK: %[[BLOCKS:.*]] = arith.ceildivui %[[TOTAL]], %[[C128]]
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[BLOCKS]], {{.*}} threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C128]], {{.*}} function(@add_bias_scale_elementwise)
// CHECK: %[[T:.*]] = arith.addi
// CHECK: arith.cmpi ult, %[[T]], %[[TOTAL]]
// CHECK: %[[G:.*]] = arith.remui %[[T]], %[[GROUPS]]
// CHECK: %[[COL:.*]] = arith.muli %[[G]], %[[C4]]
// CHECK: %[[R:.*]] = arith.divui %[[T]], %[[GROUPS]]
// CHECK: %[[ROW:.*]] = arith.remui %[[R]]
// CHECK: arith.remui %[[N]], %[[C4]]
// CHECK: memref.extract_aligned_pointer_as_index %[[X]]
// CHECK: memref.extract_aligned_pointer_as_index %[[B]]
// CHECK-NOT: memref.extract_aligned_pointer_as_index %[[S]]
// CHECK: memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK: scf.if
// CHECK-DAG: %[[XV:.*]] = vector.load %[[X]][%[[ROW]], %[[COL]]] {alignment = 16 : i64} : memref<?x?xf32>, vector<4xf32>
// CHECK-DAG: %[[BV:.*]] = vector.load %[[B]][%[[COL]]] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
// CHECK-DAG: %[[SV:.*]] = memref.load %[[S]][%[[ROW]], %c0]
// CHECK-COUNT-4: arith.mulf {{.*}}, %[[SV]] : f32
// CHECK: %[[PACKED:.*]] = vector.from_elements {{.*}} : vector<4xf32>
// CHECK: vector.store %[[PACKED]], %[[OUT]][%[[ROW]], %[[COL]]] {alignment = 16 : i64}
// CHECK: } else {
// CHECK: scf.for
// CHECK: memref.load %[[X]]
// CHECK: arith.mulf
// CHECK: memref.store
// CHECK-NOT: linalg.generic
func.func @add_bias_scale(%x: memref<?x?xf32>, %b: memref<?xf32>, %s: memref<?x1xf32>, %out: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [#id, #col, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b, %s : memref<?x?xf32>, memref<?xf32>, memref<?x1xf32>) outs(%out : memref<?x?xf32>) {
  ^bb0(%a: f32, %c: f32, %d: f32, %o: f32):
    %0 = arith.addf %a, %c : f32
    %1 = arith.mulf %0, %d : f32
    linalg.yield %1 : f32
  }
  return
}

// bf16 alone: 8 elements (16 bytes) per thread.
// CHECK-LABEL: func.func @bf16
// CHECK: arith.remui %{{.*}}, %c8
// CHECK: vector.load {{.*}} {alignment = 16 : i64} : memref<4x?xbf16>, vector<8xbf16>
// CHECK-COUNT-8: arith.mulf {{.*}} : bf16
// CHECK: vector.store {{.*}} {alignment = 16 : i64} : memref<4x?xbf16>, vector<8xbf16>
func.func @bf16(%x: memref<4x?xbf16>, %out: memref<4x?xbf16>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x?xbf16>) outs(%out : memref<4x?xbf16>) {
  ^bb0(%a: bf16, %o: bf16):
    %0 = arith.mulf %a, %a : bf16
    linalg.yield %0 : bf16
  }
  return
}

// f32 to bf16: the widest element (f32) sets 4 per thread; the bf16 output
// is stored as vector<4xbf16>, aligned to its 8 bytes. The i1 output is
// stored element by element (vectors of i1 are bit-packed in LLVM).
// CHECK-LABEL: func.func @mixed
// CHECK: vector.load {{.*}} {alignment = 16 : i64} : memref<?x?xf32>, vector<4xf32>
// CHECK-COUNT-4: memref.store {{.*}} : memref<?x?xi1>
// CHECK: vector.store {{.*}} {alignment = 8 : i64} : memref<?x?xbf16>, vector<4xbf16>
func.func @mixed(%x: memref<?x?xf32>, %out: memref<?x?xbf16>, %mask: memref<?x?xi1>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x?xf32>) outs(%out, %mask : memref<?x?xbf16>, memref<?x?xi1>) {
  ^bb0(%a: f32, %o: bf16, %m: i1):
    %0 = arith.truncf %a : f32 to bf16
    %1 = arith.cmpf ogt, %a, %zero : f32
    linalg.yield %0, %1 : bf16, i1
  }
  return
}

// A static last dim that 4 does not divide never takes the vector path:
// left to the scalar one-element-per-thread mapping.
// CHECK-LABEL: func.func @not_divisible
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @not_divisible(%x: memref<8x6xf32>, %out: memref<8x6xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x6xf32>) outs(%out : memref<8x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = math.exp %a : f32
    linalg.yield %0 : f32
  }
  return
}

// A static last dim that 4 divides: only the pointers are checked.
// CHECK-LABEL: func.func @divisible
// CHECK-NOT: arith.remui %c16
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: vector.load
func.func @divisible(%x: memref<8x16xf32>, %out: memref<8x16xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x16xf32>) outs(%out : memref<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = math.exp %a : f32
    linalg.yield %0 : f32
  }
  return
}

// A transposed read is element by element, the contiguous output still a
// vector store.
// CHECK-LABEL: func.func @transposed
// CHECK-NOT: vector.load
// CHECK-COUNT-4: memref.load {{.*}} : memref<?x?xf32>
// CHECK: vector.store
func.func @transposed(%x: memref<?x?xf32>, %out: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x?xf32>) outs(%out : memref<?x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// Left to the parallel-loop mapping: reductions, strided layouts and i1
// only (no operand for a vector access), bodies reading linalg.index.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: gpu.launch
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @left_alone(%x: memref<?x?xf32>, %r: memref<?xf32>, %s: memref<?x?xf32, strided<[?, 2]>>, %m: memref<?x?xi1>, %n: memref<?x?xi1>, %out: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x?xf32>) outs(%r : memref<?xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %0 = arith.addf %a, %acc : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : memref<?x?xf32, strided<[?, 2]>>) outs(%s : memref<?x?xf32, strided<[?, 2]>>) {
  ^bb0(%a: f32, %o: f32):
    %0 = arith.addf %a, %a : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m : memref<?x?xi1>) outs(%n : memref<?x?xi1>) {
  ^bb0(%a: i1, %o: i1):
    %true = arith.constant true
    %0 = arith.xori %a, %true : i1
    linalg.yield %0 : i1
  }
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%out : memref<?x?xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 1 : index
    %c = arith.index_cast %i : index to i32
    %f = arith.sitofp %c : i32 to f32
    linalg.yield %f : f32
  }
  return
}
