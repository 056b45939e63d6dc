// RUN: fxmlir-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(fxmlir-fuse-sibling-reductions))' | FileCheck %s

// Layer norm's backward: two sums over each row of products with the
// gradient, into one zeroed tensor. One op sums both, each into a fill of
// its own.
// CHECK-LABEL: func.func @row_sums
// CHECK-SAME: (%[[G:.*]]: tensor<4x8xf32>, %[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8xf32>)
// CHECK-COUNT-2: linalg.fill
// CHECK: %[[BOTH:.*]]:2 = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%[[G]], %[[W]], %[[X]] :
// CHECK-NOT: linalg.generic
// CHECK: return %[[BOTH]]#0, %[[BOTH]]#1
#x = affine_map<(d0, d1) -> (d0, d1)>
#w = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @row_sums(%g: tensor<4x8xf32>, %x: tensor<4x8xf32>, %w: tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %a = linalg.generic {indexing_maps = [#x, #w, #row], iterator_types = ["parallel", "reduction"]}
      ins(%g, %w : tensor<4x8xf32>, tensor<8xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%in: f32, %in_w: f32, %out: f32):
    %0 = arith.mulf %in, %in_w : f32
    %1 = arith.addf %0, %out : f32
    linalg.yield %1 : f32
  } -> tensor<4xf32>
  %b = linalg.generic {indexing_maps = [#x, #x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%g, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%in: f32, %in_x: f32, %out: f32):
    %0 = arith.mulf %in, %in_x : f32
    %1 = arith.addf %0, %out : f32
    linalg.yield %1 : f32
  } -> tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// The weight and bias gradients: sums over the rows, the second's init
// filled after the first sum. The fill moves before the merged op.
// CHECK-LABEL: func.func @column_sums
// CHECK-SAME: (%[[G:.*]]: tensor<4x8xf32>, %[[X:.*]]: tensor<4x8xf32>, %[[OW:.*]]: tensor<8xf32>, %[[OB:.*]]: tensor<8xf32>)
// CHECK: %[[FW:.*]] = linalg.fill {{.*}} outs(%[[OW]]
// CHECK: %[[FB:.*]] = linalg.fill {{.*}} outs(%[[OB]]
// CHECK: %[[BOTH:.*]]:2 = linalg.generic
// CHECK-SAME: iterator_types = ["reduction", "parallel"]
// CHECK-SAME: outs(%[[FW]], %[[FB]] :
// CHECK-NOT: linalg.generic
// CHECK: return %[[BOTH]]#0, %[[BOTH]]#1
#x = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @column_sums(%g: tensor<4x8xf32>, %x: tensor<4x8xf32>, %ow: tensor<8xf32>, %ob: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %zw = linalg.fill ins(%zero : f32) outs(%ow : tensor<8xf32>) -> tensor<8xf32>
  %dw = linalg.generic {indexing_maps = [#x, #x, #col], iterator_types = ["reduction", "parallel"]}
      ins(%g, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%zw : tensor<8xf32>) {
  ^bb0(%in: f32, %in_x: f32, %out: f32):
    %0 = arith.mulf %in, %in_x : f32
    %1 = arith.addf %0, %out : f32
    linalg.yield %1 : f32
  } -> tensor<8xf32>
  %zb = linalg.fill ins(%zero : f32) outs(%ob : tensor<8xf32>) -> tensor<8xf32>
  %db = linalg.generic {indexing_maps = [#x, #col], iterator_types = ["reduction", "parallel"]}
      ins(%g : tensor<4x8xf32>) outs(%zb : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  return %dw, %db : tensor<8xf32>, tensor<8xf32>
}

// -----

// A sum over the rows and one over the columns of one input run different
// loops: they stay two ops.
// CHECK-LABEL: func.func @other_loops
// CHECK-COUNT-2: linalg.generic
#x = affine_map<(d0, d1) -> (d0, d1)>
#d0 = affine_map<(d0, d1) -> (d0)>
#d1 = affine_map<(d0, d1) -> (d1)>
func.func @other_loops(%g: tensor<8x8xf32>, %o: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %rows = linalg.generic {indexing_maps = [#x, #d0], iterator_types = ["parallel", "reduction"]}
      ins(%g : tensor<8x8xf32>) outs(%o : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  %cols = linalg.generic {indexing_maps = [#x, #d1], iterator_types = ["reduction", "parallel"]}
      ins(%g : tensor<8x8xf32>) outs(%o : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  return %rows, %cols : tensor<8xf32>, tensor<8xf32>
}

// -----

// Two row sums that share only a weight, read along the row: its map does
// not name the rows, whose counts differ (4 and 6). They stay two ops.
// CHECK-LABEL: func.func @shared_weight_only
// CHECK-COUNT-2: linalg.generic
#x = affine_map<(d0, d1) -> (d0, d1)>
#w = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @shared_weight_only(%a: tensor<4x8xf32>, %b: tensor<6x8xf32>, %w: tensor<8xf32>, %oa: tensor<4xf32>, %ob: tensor<6xf32>) -> (tensor<4xf32>, tensor<6xf32>) {
  %sa = linalg.generic {indexing_maps = [#x, #w, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a, %w : tensor<4x8xf32>, tensor<8xf32>) outs(%oa : tensor<4xf32>) {
  ^bb0(%in: f32, %in_w: f32, %out: f32):
    %0 = arith.mulf %in, %in_w : f32
    %1 = arith.addf %0, %out : f32
    linalg.yield %1 : f32
  } -> tensor<4xf32>
  %sb = linalg.generic {indexing_maps = [#x, #w, #row], iterator_types = ["parallel", "reduction"]}
      ins(%b, %w : tensor<6x8xf32>, tensor<8xf32>) outs(%ob : tensor<6xf32>) {
  ^bb0(%in: f32, %in_w: f32, %out: f32):
    %0 = arith.mulf %in, %in_w : f32
    %1 = arith.addf %0, %out : f32
    linalg.yield %1 : f32
  } -> tensor<6xf32>
  return %sa, %sb : tensor<4xf32>, tensor<6xf32>
}

// -----

// Elementwise siblings are fxmlir-fuse-elementwise's: not merged here.
// CHECK-LABEL: func.func @elementwise
// CHECK-COUNT-2: linalg.generic
#x = affine_map<(d0) -> (d0)>
func.func @elementwise(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %x = linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %in : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  %y = linalg.generic {indexing_maps = [#x, #x, #x], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %in_b: f32, %out: f32):
    %0 = arith.addf %in, %in_b : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  return %x, %y : tensor<8xf32>, tensor<8xf32>
}

// -----

// Two row sums of seven shared inputs: sixteen operands between them, but
// the merged op reads each input once: nine.
// CHECK-LABEL: func.func @shared_inputs_counted_once
// CHECK: linalg.generic
// CHECK-NOT: linalg.generic
#x = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @shared_inputs_counted_once(%x0: tensor<4x64xf32>, %x1: tensor<4x64xf32>, %x2: tensor<4x64xf32>, %x3: tensor<4x64xf32>, %x4: tensor<4x64xf32>, %x5: tensor<4x64xf32>, %x6: tensor<4x64xf32>, %oa: tensor<4xf32>, %ob: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = linalg.generic {indexing_maps = [#x, #x, #x, #x, #x, #x, #x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x0, %x1, %x2, %x3, %x4, %x5, %x6 : tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>) outs(%oa : tensor<4xf32>) {
  ^bb0(%i0: f32, %i1: f32, %i2: f32, %i3: f32, %i4: f32, %i5: f32, %i6: f32, %acc: f32):
    %s1 = arith.addf %i0, %i1 : f32
    %s2 = arith.addf %s1, %i2 : f32
    %s3 = arith.addf %s2, %i3 : f32
    %s4 = arith.addf %s3, %i4 : f32
    %s5 = arith.addf %s4, %i5 : f32
    %s6 = arith.addf %s5, %i6 : f32
    %r = arith.addf %s6, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %b = linalg.generic {indexing_maps = [#x, #x, #x, #x, #x, #x, #x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x0, %x1, %x2, %x3, %x4, %x5, %x6 : tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>) outs(%ob : tensor<4xf32>) {
  ^bb0(%i0: f32, %i1: f32, %i2: f32, %i3: f32, %i4: f32, %i5: f32, %i6: f32, %acc: f32):
    %s1 = arith.addf %i0, %i1 : f32
    %s2 = arith.addf %s1, %i2 : f32
    %s3 = arith.addf %s2, %i3 : f32
    %s4 = arith.addf %s3, %i4 : f32
    %s5 = arith.addf %s4, %i5 : f32
    %s6 = arith.addf %s5, %i6 : f32
    %r = arith.addf %s6, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// Sharing one input of seven, the merged op would read thirteen inputs:
// beyond the dozen operands a loop walks well. They stay two ops.
// CHECK-LABEL: func.func @too_many_streams
// CHECK-COUNT-2: linalg.generic
#x = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @too_many_streams(%x0: tensor<4x64xf32>, %x1: tensor<4x64xf32>, %x2: tensor<4x64xf32>, %x3: tensor<4x64xf32>, %x4: tensor<4x64xf32>, %x5: tensor<4x64xf32>, %x6: tensor<4x64xf32>, %y1: tensor<4x64xf32>, %y2: tensor<4x64xf32>, %y3: tensor<4x64xf32>, %y4: tensor<4x64xf32>, %y5: tensor<4x64xf32>, %y6: tensor<4x64xf32>, %oa: tensor<4xf32>, %ob: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = linalg.generic {indexing_maps = [#x, #x, #x, #x, #x, #x, #x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x0, %x1, %x2, %x3, %x4, %x5, %x6 : tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>) outs(%oa : tensor<4xf32>) {
  ^bb0(%i0: f32, %i1: f32, %i2: f32, %i3: f32, %i4: f32, %i5: f32, %i6: f32, %acc: f32):
    %s1 = arith.addf %i0, %i1 : f32
    %s2 = arith.addf %s1, %i2 : f32
    %s3 = arith.addf %s2, %i3 : f32
    %s4 = arith.addf %s3, %i4 : f32
    %s5 = arith.addf %s4, %i5 : f32
    %s6 = arith.addf %s5, %i6 : f32
    %r = arith.addf %s6, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %b = linalg.generic {indexing_maps = [#x, #x, #x, #x, #x, #x, #x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x0, %y1, %y2, %y3, %y4, %y5, %y6 : tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>) outs(%ob : tensor<4xf32>) {
  ^bb0(%i0: f32, %i1: f32, %i2: f32, %i3: f32, %i4: f32, %i5: f32, %i6: f32, %acc: f32):
    %s1 = arith.addf %i0, %i1 : f32
    %s2 = arith.addf %s1, %i2 : f32
    %s3 = arith.addf %s2, %i3 : f32
    %s4 = arith.addf %s3, %i4 : f32
    %s5 = arith.addf %s4, %i5 : f32
    %s6 = arith.addf %s5, %i6 : f32
    %r = arith.addf %s6, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}
