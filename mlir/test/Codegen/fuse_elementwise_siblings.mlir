// RUN: fxmlir-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(fxmlir-fuse-elementwise,cse))' | FileCheck %s

// SwiGLU's forward: silu(a) is a result (saved for the backward) and read
// by the product. The product's loop writes both; exp is computed once.
// CHECK-LABEL: func.func @multi_output
// CHECK-SAME: (%[[A:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK: %[[BOTH:.*]]:2 = linalg.generic {{.*}} ins(%[[A]], %[[B]] : tensor<8xf32>, tensor<8xf32>)
// CHECK-COUNT-1: math.exp
// CHECK-NOT: linalg.generic
// CHECK: return %[[BOTH]]#{{[01]}}, %[[BOTH]]#{{[01]}}
#id = affine_map<(d0) -> (d0)>
func.func @multi_output(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    %1 = arith.mulf %in, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<8xf32>
  %m = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%s, %b : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %0 = arith.mulf %x, %y : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  return %s, %m : tensor<8xf32>, tensor<8xf32>
}

// -----

// SwiGLU's backward: g * b and g * a * silu'(a) read the same gradient. One
// loop nest computes both, reading g once.
// CHECK-LABEL: func.func @siblings
// CHECK-SAME: (%[[G:.*]]: tensor<?x8xf32>, %[[A:.*]]: tensor<?x8xf32>, %[[B:.*]]: tensor<?x8xf32>)
// CHECK: %[[BOTH:.*]]:2 = linalg.generic {{.*}} ins(%[[G]], %[[B]], %[[A]] : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>)
// CHECK: %[[GB:.*]] = arith.mulf
// CHECK: math.exp
// CHECK: linalg.yield %[[GB]], %{{.*}} : f32, f32
// CHECK-NOT: linalg.generic
// CHECK: return %[[BOTH]]#0, %[[BOTH]]#1
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @siblings(%g: tensor<?x8xf32>, %a: tensor<?x8xf32>, %b: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %g, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %gb = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g, %b : tensor<?x8xf32>, tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %0 = arith.mulf %x, %y : f32
    linalg.yield %0 : f32
  } -> tensor<?x8xf32>
  %ga = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g, %a : tensor<?x8xf32>, tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %0 = math.exp %y : f32
    %1 = arith.mulf %x, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<?x8xf32>
  return %gb, %ga : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// Not siblings: the second op reads a row statistic computed after the
// first (merging would need it before), and the third iterates over other
// elements (a broadcast operand is all they share).
// CHECK-LABEL: func.func @not_siblings
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<8xf32>) outs(%{{.*}} : tensor<2x8xf32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @not_siblings(%g: tensor<4x8xf32>, %a: tensor<4x8xf32>, %w: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %first = linalg.generic {indexing_maps = [#id, #id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g, %a, %w : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32, %out: f32):
    %0 = arith.mulf %x, %y : f32
    %1 = arith.mulf %0, %z : f32
    linalg.yield %1 : f32
  } -> tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %second = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g, %sum : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %s: f32, %out: f32):
    %0 = arith.mulf %x, %s : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<2x8xf32>
  %third = linalg.generic {indexing_maps = [#col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<8xf32>) outs(%e2 : tensor<2x8xf32>) {
  ^bb0(%x: f32, %out: f32):
    %0 = arith.mulf %x, %x : f32
    linalg.yield %0 : f32
  } -> tensor<2x8xf32>
  return %first, %second, %third : tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x8xf32>
}

// -----

// A producer read twice by its consumer (x * x) and returned: upstream
// fusion takes both reads, and the producer and the product end as one loop
// computing exp once.
// CHECK-LABEL: func.func @read_twice
// CHECK-SAME: (%[[A:.*]]: tensor<8xf32>)
// CHECK: %[[BOTH:.*]]:2 = linalg.generic {{.*}} ins(%[[A]] : tensor<8xf32>)
// CHECK-COUNT-1: math.exp
// CHECK-NOT: linalg.generic
// CHECK: return %[[BOTH]]#0, %[[BOTH]]#1
#id = affine_map<(d0) -> (d0)>
func.func @read_twice(%a: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  %m = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%s, %s : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %0 = arith.mulf %x, %y : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  return %s, %m : tensor<8xf32>, tensor<8xf32>
}
