// RUN: fxmlir-opt %s --pass-pipeline='builtin.module(func.func(fxmlir-fuse-elementwise))' | FileCheck %s
// RUN: fxmlir-opt %s --pass-pipeline='builtin.module(func.func(fxmlir-fuse-elementwise{max-recompute-ops=1}))' | FileCheck %s --check-prefix=NORECOMPUTE

#id = affine_map<(d0) -> (d0)>

// x + x feeds two consumers: it is recomputed in each instead of being
// written to a temporary.
// CHECK-LABEL: func.func @recompute
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: return
// NORECOMPUTE-LABEL: func.func @recompute
// NORECOMPUTE-COUNT-3: linalg.generic
func.func @recompute(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %twice = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %in : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  %add = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%twice : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %in : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  %mul = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%twice : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %in : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  return %add, %mul : tensor<8xf32>, tensor<8xf32>
}

// exp is not worth recomputing: it stays, read by both consumers.
// CHECK-LABEL: func.func @keep_transcendental
// CHECK: %[[EXP:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} ins(%[[EXP]]
// CHECK: linalg.generic {{.*}} ins(%[[EXP]]
func.func @keep_transcendental(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  %add = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%exp : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %in : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  %mul = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%exp : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %in : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  return %add, %mul : tensor<8xf32>, tensor<8xf32>
}
