// RUN: fxmlir-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(fxmlir-fuse-elementwise,cse))' | FileCheck %s

// Rotary embeddings' rotate_half: x * cos + cat(-x2, x1) * sin. The
// elementwise op reading the concatenation is computed per piece on slices
// of x, cos and sin (the negation fuses into the first), and the pieces are
// inserted into the result: no element is read at a computed index.
// CHECK-LABEL: func.func @rotate_half
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>, %[[COS:.*]]: tensor<8xf32>, %[[SIN:.*]]: tensor<8xf32>)
// CHECK-DAG: %[[X1:.*]] = tensor.extract_slice %[[X]][0, 0] [%{{.*}}, 4] [1, 1]
// CHECK-DAG: %[[X2:.*]] = tensor.extract_slice %[[X]][0, 4] [%{{.*}}, 4] [1, 1]
// CHECK-DAG: %[[COS1:.*]] = tensor.extract_slice %[[COS]][0] [4] [1]
// CHECK-DAG: %[[SIN1:.*]] = tensor.extract_slice %[[SIN]][0] [4] [1]
// CHECK: %[[FIRST:.*]] = linalg.generic {{.*}} ins(%[[X1]], %[[COS1]], %[[X2]], %[[SIN1]] :
// CHECK: arith.negf
// CHECK: %[[SECOND:.*]] = linalg.generic {{.*}} ins(%[[X2]], %{{.*}}, %[[X1]], %{{.*}} :
// CHECK-NOT: arith.negf
// CHECK: %[[EMPTY:.*]] = tensor.empty(%{{.*}}) : tensor<?x8xf32>
// CHECK: %[[INTO:.*]] = tensor.insert_slice %[[FIRST]] into %[[EMPTY]][0, 0] [%{{.*}}, 4] [1, 1]
// CHECK: %[[RESULT:.*]] = tensor.insert_slice %[[SECOND]] into %[[INTO]][0, 4] [%{{.*}}, 4] [1, 1]
// CHECK: return %[[RESULT]]
// CHECK-NOT: tensor.extract
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @rotate_half(%x: tensor<?x8xf32>, %cos: tensor<8xf32>, %sin: tensor<8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %x1 = tensor.extract_slice %x[0, 0] [%n, 4] [1, 1] : tensor<?x8xf32> to tensor<?x4xf32>
  %x2 = tensor.extract_slice %x[0, 4] [%n, 4] [1, 1] : tensor<?x8xf32> to tensor<?x4xf32>
  %eh = tensor.empty(%n) : tensor<?x4xf32>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x2 : tensor<?x4xf32>) outs(%eh : tensor<?x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    linalg.yield %0 : f32
  } -> tensor<?x4xf32>
  %rot = tensor.concat dim(1) %neg, %x1 : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %cos : tensor<?x8xf32>, tensor<8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %0 = arith.mulf %in, %c : f32
    linalg.yield %0 : f32
  } -> tensor<?x8xf32>
  %b = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%rot, %sin : tensor<?x8xf32>, tensor<8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %0 = arith.mulf %in, %s : f32
    linalg.yield %0 : f32
  } -> tensor<?x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<?x8xf32>, tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %0 = arith.addf %p, %q : f32
    linalg.yield %0 : f32
  } -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// Two slice_backwards that add up (rotate_half's gradient): zeros and the
// gradients, concatenated at the same offsets. Each piece of the sum reads
// the matching piece of both, and the zeros fold into the bodies.
// CHECK-LABEL: func.func @sum_of_slice_backwards
// CHECK-SAME: (%[[A:.*]]: tensor<2x4xf32>, %[[B:.*]]: tensor<2x4xf32>)
// CHECK: %[[FIRST:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<2x4xf32>)
// CHECK: %[[SECOND:.*]] = linalg.generic {{.*}} ins(%[[A]] : tensor<2x4xf32>)
// CHECK: tensor.insert_slice %[[FIRST]] into %{{.*}}[0, 0] [2, 4] [1, 1]
// CHECK: tensor.insert_slice %[[SECOND]] into %{{.*}}[0, 4] [2, 4] [1, 1]
// CHECK-NOT: linalg.fill
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @sum_of_slice_backwards(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> tensor<2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %eh = tensor.empty() : tensor<2x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%eh : tensor<2x4xf32>) -> tensor<2x4xf32>
  %ga = tensor.concat dim(1) %z, %a : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  %gb = tensor.concat dim(1) %b, %z : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  %e = tensor.empty() : tensor<2x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ga, %gb : tensor<2x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %0 = arith.addf %p, %q : f32
    linalg.yield %0 : f32
  } -> tensor<2x8xf32>
  return %s : tensor<2x8xf32>
}

// -----

// Not split: a reduction reading a concatenation (the concatenation is
// written piece by piece into one tensor, which the sum reads), and an
// elementwise op that reads its indices.
// CHECK-LABEL: func.func @not_split
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<2x8xf32>
// CHECK: %[[P:.*]] = tensor.insert_slice %{{.*}} into %[[EMPTY]][0, 0] [2, 4] [1, 1]
// CHECK: %[[CAT:.*]] = tensor.insert_slice %{{.*}} into %[[P]][0, 4] [2, 4] [1, 1]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[CAT]] :
// CHECK: linalg.generic {{.*}} ins(%[[CAT]] :
// CHECK: linalg.index 1
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @not_split(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> (tensor<2xf32>, tensor<2x8xf32>) {
  %cat = tensor.concat dim(1) %a, %b : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  %zero = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<2xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%er : tensor<2xf32>) -> tensor<2xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%cat : tensor<2x8xf32>) outs(%acc : tensor<2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<2xf32>
  %e = tensor.empty() : tensor<2x8xf32>
  %idx = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%cat : tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 1 : index
    %j = arith.index_cast %i : index to i32
    %f = arith.sitofp %j : i32 to f32
    %0 = arith.mulf %in, %f : f32
    linalg.yield %0 : f32
  } -> tensor<2x8xf32>
  return %sum, %idx : tensor<2xf32>, tensor<2x8xf32>
}

// -----

// A slice of an elementwise producer that has another use and holds
// transcendental math stays a slice of the producer (recomputing tanh for
// the slice would cost more than reading it).
// CHECK-LABEL: func.func @slice_of_expensive
// CHECK: %[[T:.*]] = linalg.generic
// CHECK: math.tanh
// CHECK: %[[S:.*]] = tensor.extract_slice %[[T]][0, 4] [2, 4] [1, 1]
// CHECK: return %[[T]], %[[S]]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @slice_of_expensive(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x4xf32>) {
  %e = tensor.empty() : tensor<2x8xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.tanh %in : f32
    linalg.yield %0 : f32
  } -> tensor<2x8xf32>
  %s = tensor.extract_slice %t[0, 4] [2, 4] [1, 1] : tensor<2x8xf32> to tensor<2x4xf32>
  return %t, %s : tensor<2x8xf32>, tensor<2x4xf32>
}
