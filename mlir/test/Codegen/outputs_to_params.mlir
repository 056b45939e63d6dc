// RUN: fxmlir-opt %s --pass-pipeline='builtin.module(func.func(fxmlir-outputs-to-params))' | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// The elementwise result is computed into the new argument; the row sum
// accumulates into a collapsed view of its argument (behind the keepdim
// expand_shape), filled there, the fill it had erased (read by no op, it
// would still write its buffer); a returned input is copied.
// CHECK-LABEL: func.func @outputs
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[OUT0:.*]]: tensor<4x8xf32>, %[[OUT1:.*]]: tensor<4x1xf32>, %[[OUT2:.*]]: tensor<4x8xf32>)
// CHECK: %[[VIEW:.*]] = tensor.collapse_shape %[[OUT1]] {{\[\[}}0, 1]] : tensor<4x1xf32> into tensor<4xf32>
// CHECK: linalg.generic {{.*}} outs(%[[OUT0]] : tensor<4x8xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[VIEW]] : tensor<4xf32>)
// CHECK: linalg.generic {{.*}} outs(%[[ACC]] : tensor<4xf32>)
// CHECK: %[[COPY:.*]] = linalg.copy ins(%[[X]] : tensor<4x8xf32>) outs(%[[OUT2]] : tensor<4x8xf32>)
// CHECK: return %{{.*}}, %{{.*}}, %[[COPY]]
func.func @outputs(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %r = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%r : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %in, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %kept = tensor.expand_shape %sum [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
  return %exp, %kept, %x : tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x8xf32>
}

// -----

// A concatenation's pieces inserted one after the other into an empty
// tensor are inserted into the output argument instead.
// CHECK-LABEL: func.func @concatenation
// CHECK-SAME: (%[[A:.*]]: tensor<2x4xf32>, %[[B:.*]]: tensor<2x4xf32>, %[[OUT:.*]]: tensor<2x8xf32>)
// CHECK: %[[P:.*]] = tensor.insert_slice %[[A]] into %[[OUT]][0, 0] [2, 4] [1, 1]
// CHECK: %[[R:.*]] = tensor.insert_slice %[[B]] into %[[P]][0, 4] [2, 4] [1, 1]
// CHECK: return %[[R]]
func.func @concatenation(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> tensor<2x8xf32> {
  %e = tensor.empty() : tensor<2x8xf32>
  %p = tensor.insert_slice %a into %e[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x8xf32>
  %r = tensor.insert_slice %b into %p[0, 4] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}
