// RUN: fxmlir-opt %s --pass-pipeline='builtin.module(func.func(fxmlir-private-fills))' | FileCheck %s

#in = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Two row sums accumulating into one filled tensor: the second gets an
// empty tensor and a fill of its own, just before it; the first keeps the
// shared one. A fill with one writer, and a fill of an argument (not an
// empty tensor), stay as they are.
// CHECK-LABEL: func.func @shared_accumulator
// CHECK-SAME: (%[[X:.*]]: tensor<8x64xf32>, %[[OUT:.*]]: tensor<8xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.0
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<8xf32>)
// CHECK: linalg.generic {{.*}} outs(%[[F]] : tensor<8xf32>)
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<8xf32>
// CHECK: %[[F2:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E2]] : tensor<8xf32>)
// CHECK: linalg.generic {{.*}} outs(%[[F2]] : tensor<8xf32>)
// CHECK: %[[A:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[OUT]] : tensor<8xf32>)
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic {{.*}} outs(%[[A]] : tensor<8xf32>)
// CHECK: linalg.generic {{.*}} outs(%[[A]] : tensor<8xf32>)
func.func @shared_accumulator(%x: tensor<8x64xf32>, %out: tensor<8xf32>)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#in, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x64xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %squares = linalg.generic {indexing_maps = [#in, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x64xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.mulf %in, %in : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %a = linalg.fill ins(%zero : f32) outs(%out : tensor<8xf32>) -> tensor<8xf32>
  %s1 = linalg.generic {indexing_maps = [#in, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x64xf32>) outs(%a : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %s2 = linalg.generic {indexing_maps = [#in, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x64xf32>) outs(%a : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.maximumf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %sum, %squares, %s1, %s2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
