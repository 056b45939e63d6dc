// RUN: fxmlir-opt %s --fxmlir-convert-to-linalg --split-input-file | FileCheck %s

// Slices, concatenation, transposes and copies (DataMovementOps.cpp) and
// the negative log-likelihood gradient (LossOps.cpp).

// A slice reads its operand in place: an extract_slice with torch's bounds
// (a negative start counts from the end, an end past the dim is clamped).
// A slice of the whole dim is its operand.
// CHECK-LABEL: func.func private @slice
// CHECK-SAME: (%[[X:.*]]: tensor<?x4x8xf32>)
// CHECK: %[[D0:.*]] = tensor.dim %[[X]], %c0
// CHECK: %[[HALF:.*]] = tensor.extract_slice %[[X]][0, 0, 4] [%[[D0]], 4, 4] [1, 1, 1]
// CHECK: %[[EVERY:.*]] = tensor.extract_slice %[[X]][0, 0, 1] [%{{.*}}, 4, 4] [1, 1, 2]
// CHECK: return %[[HALF]], %[[EVERY]], %[[X]]
func.func private @slice(%x: tensor<?x4x8xf32, #fxmlir.device<"cpu">>) -> (tensor<?x4x4xf32, #fxmlir.device<"cpu">>, tensor<?x4x4xf32, #fxmlir.device<"cpu">>, tensor<?x4x8xf32, #fxmlir.device<"cpu">>) {
  %0 = fxmlir.aten.slice.Tensor %x {dim = -1 : i64, start = -4 : i64, end = 100 : i64, step = 1 : i64} : (tensor<?x4x8xf32, #fxmlir.device<"cpu">>) -> tensor<?x4x4xf32, #fxmlir.device<"cpu">>
  %1 = fxmlir.aten.slice.Tensor %x {dim = 2 : i64, start = 1 : i64, step = 2 : i64} : (tensor<?x4x8xf32, #fxmlir.device<"cpu">>) -> tensor<?x4x4xf32, #fxmlir.device<"cpu">>
  %2 = fxmlir.aten.slice.Tensor %x {dim = 1 : i64, start = 0 : i64, end = 4 : i64, step = 1 : i64} : (tensor<?x4x8xf32, #fxmlir.device<"cpu">>) -> tensor<?x4x8xf32, #fxmlir.device<"cpu">>
  return %0, %1, %2 : tensor<?x4x4xf32, #fxmlir.device<"cpu">>, tensor<?x4x4xf32, #fxmlir.device<"cpu">>, tensor<?x4x8xf32, #fxmlir.device<"cpu">>
}

// -----

// slice_backward puts the gradient at the slice's positions of zeros. With a
// step, each element reads the gradient at its position (clamped in bounds)
// and keeps it where the position is in the slice.
// CHECK-LABEL: func.func private @slice_backward
// CHECK-SAME: (%[[G:.*]]: tensor<2x4x4xf32>)
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<2x4x8xf32>
// CHECK: linalg.generic {{.*}} outs(%[[EMPTY]] : tensor<2x4x8xf32>)
// CHECK: %[[I:.*]] = linalg.index 2
// CHECK: %[[OFFSET:.*]] = arith.subi %[[I]], %c1
// CHECK: %[[POS:.*]] = arith.divsi %[[OFFSET]], %c2
// CHECK: arith.remsi %[[OFFSET]], %c2
// CHECK: %[[READ:.*]] = tensor.extract %[[G]]
// CHECK: arith.select %{{.*}}, %[[READ]], %cst
func.func private @slice_backward(%g: tensor<2x4x4xf32, #fxmlir.device<"cpu">>) -> tensor<2x4x8xf32, #fxmlir.device<"cpu">> {
  %0 = "fxmlir.call"(%g) {target = "aten::slice_backward.default", args = [#fxmlir.operand<0>, [2, 4, 8], -1, 1, 9223372036854775807, 2], kwargs = {}} : (tensor<2x4x4xf32, #fxmlir.device<"cpu">>) -> tensor<2x4x8xf32, #fxmlir.device<"cpu">>
  return %0 : tensor<2x4x8xf32, #fxmlir.device<"cpu">>
}

// -----

// Without a step, slice_backward is the gradient between zeros: a
// concatenation (no zeros after a slice that runs to the end, and the
// gradient itself for a slice of the whole dim).
// CHECK-LABEL: func.func private @slice_backward_contiguous
// CHECK-SAME: (%[[G:.*]]: tensor<2x4x3xf32>, %[[H:.*]]: tensor<2x4x5xf32>, %[[W:.*]]: tensor<2x4x8xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[Z1:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<2x4x1xf32>)
// CHECK: %[[Z4:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<2x4x4xf32>)
// CHECK: %[[MID:.*]] = tensor.concat dim(2) %[[Z1]], %[[G]], %[[Z4]] : (tensor<2x4x1xf32>, tensor<2x4x3xf32>, tensor<2x4x4xf32>) -> tensor<2x4x8xf32>
// CHECK: %[[ZERO2:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[Z3:.*]] = linalg.fill ins(%[[ZERO2]] : f32) outs(%{{.*}} : tensor<2x4x3xf32>)
// CHECK: %[[END:.*]] = tensor.concat dim(2) %[[Z3]], %[[H]] : (tensor<2x4x3xf32>, tensor<2x4x5xf32>) -> tensor<2x4x8xf32>
// CHECK: return %[[MID]], %[[END]], %[[W]]
func.func private @slice_backward_contiguous(%g: tensor<2x4x3xf32, #fxmlir.device<"cpu">>, %h: tensor<2x4x5xf32, #fxmlir.device<"cpu">>, %w: tensor<2x4x8xf32, #fxmlir.device<"cpu">>) -> (tensor<2x4x8xf32, #fxmlir.device<"cpu">>, tensor<2x4x8xf32, #fxmlir.device<"cpu">>, tensor<2x4x8xf32, #fxmlir.device<"cpu">>) {
  %0 = "fxmlir.call"(%g) {target = "aten::slice_backward.default", args = [#fxmlir.operand<0>, [2, 4, 8], 2, 1, 4, 1], kwargs = {}} : (tensor<2x4x3xf32, #fxmlir.device<"cpu">>) -> tensor<2x4x8xf32, #fxmlir.device<"cpu">>
  %1 = "fxmlir.call"(%h) {target = "aten::slice_backward.default", args = [#fxmlir.operand<0>, [2, 4, 8], -1, 3, 9223372036854775807, 1], kwargs = {}} : (tensor<2x4x5xf32, #fxmlir.device<"cpu">>) -> tensor<2x4x8xf32, #fxmlir.device<"cpu">>
  %2 = "fxmlir.call"(%w) {target = "aten::slice_backward.default", args = [#fxmlir.operand<0>, [2, 4, 8], 2, 0, 8, 1], kwargs = {}} : (tensor<2x4x8xf32, #fxmlir.device<"cpu">>) -> tensor<2x4x8xf32, #fxmlir.device<"cpu">>
  return %0, %1, %2 : tensor<2x4x8xf32, #fxmlir.device<"cpu">>, tensor<2x4x8xf32, #fxmlir.device<"cpu">>, tensor<2x4x8xf32, #fxmlir.device<"cpu">>
}

// -----

// A varying length's sizes are the result's (-9223372036854775808: dynamic):
// the gradient of a whole dynamic dim's slice is the gradient itself, and a
// static dim's slice pads with zeros sized by the gradient's dynamic dims.
// CHECK-LABEL: func.func private @slice_backward_dynamic
// CHECK-SAME: (%[[G:.*]]: tensor<2x?x32xf32>, %[[H:.*]]: tensor<2x?x8xf32>)
// CHECK: %[[LEN:.*]] = tensor.dim %[[H]], %c1
// CHECK: %[[EMPTY:.*]] = tensor.empty(%[[LEN]]) : tensor<2x?x8xf32>
// CHECK: %[[ZEROS:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[EMPTY]] : tensor<2x?x8xf32>)
// CHECK: %[[PADDED:.*]] = tensor.concat dim(2) %[[ZEROS]], %[[H]] : (tensor<2x?x8xf32>, tensor<2x?x8xf32>) -> tensor<2x?x16xf32>
// CHECK: return %[[G]], %[[PADDED]]
func.func private @slice_backward_dynamic(%g: tensor<2x?x32xf32, #fxmlir.device<"cpu">>, %h: tensor<2x?x8xf32, #fxmlir.device<"cpu">>) -> (tensor<2x?x32xf32, #fxmlir.device<"cpu">>, tensor<2x?x16xf32, #fxmlir.device<"cpu">>) {
  %0 = "fxmlir.call"(%g) {target = "aten::slice_backward.default", args = [#fxmlir.operand<0>, [2, -9223372036854775808, 32], 1, 0, 9223372036854775807, 1], kwargs = {}} : (tensor<2x?x32xf32, #fxmlir.device<"cpu">>) -> tensor<2x?x32xf32, #fxmlir.device<"cpu">>
  %1 = "fxmlir.call"(%h) {target = "aten::slice_backward.default", args = [#fxmlir.operand<0>, [2, -9223372036854775808, 16], 2, 8, 9223372036854775807, 1], kwargs = {}} : (tensor<2x?x8xf32, #fxmlir.device<"cpu">>) -> tensor<2x?x16xf32, #fxmlir.device<"cpu">>
  return %0, %1 : tensor<2x?x32xf32, #fxmlir.device<"cpu">>, tensor<2x?x16xf32, #fxmlir.device<"cpu">>
}

// -----

// cat is a tensor.concat of its pieces (fxmlir-fuse-elementwise splits the
// elementwise ops reading it).
// CHECK-LABEL: func.func private @cat
// CHECK-SAME: (%[[A:.*]]: tensor<?x3xf32>, %[[B:.*]]: tensor<?x5xf32>)
// CHECK-NEXT: %[[C:.*]] = tensor.concat dim(1) %[[A]], %[[B]] : (tensor<?x3xf32>, tensor<?x5xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: return %[[C]]
func.func private @cat(%a: tensor<?x3xf32, #fxmlir.device<"cpu">>, %b: tensor<?x5xf32, #fxmlir.device<"cpu">>) -> tensor<?x8xf32, #fxmlir.device<"cpu">> {
  %0 = fxmlir.aten.cat [%a, %b] {dim = 1 : i64} : (tensor<?x3xf32, #fxmlir.device<"cpu">>, tensor<?x5xf32, #fxmlir.device<"cpu">>) -> tensor<?x8xf32, #fxmlir.device<"cpu">>
  return %0 : tensor<?x8xf32, #fxmlir.device<"cpu">>
}

// -----

// torch skips a legacy empty 1-d piece (an empty cache concatenated with
// keys): what is left of this cat is its other piece.
// CHECK-LABEL: func.func private @cat_empty_piece
// CHECK-SAME: (%{{.*}}: tensor<0xf32>, %[[X:.*]]: tensor<?x4x16xf32>)
// CHECK-NEXT: return %[[X]]
func.func private @cat_empty_piece(%e: tensor<0xf32, #fxmlir.device<"cpu">>, %x: tensor<?x4x16xf32, #fxmlir.device<"cpu">>) -> tensor<?x4x16xf32, #fxmlir.device<"cpu">> {
  %0 = fxmlir.aten.cat [%e, %x] {dim = -2 : i64} : (tensor<0xf32, #fxmlir.device<"cpu">>, tensor<?x4x16xf32, #fxmlir.device<"cpu">>) -> tensor<?x4x16xf32, #fxmlir.device<"cpu">>
  return %0 : tensor<?x4x16xf32, #fxmlir.device<"cpu">>
}

// -----

// A transpose reads its operand at permuted indices; dim 0 stays in place.
// A contiguous clone is its operand.
// CHECK-DAG: #[[$SWAP:.*]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func private @transpose
// CHECK-SAME: (%[[X:.*]]: tensor<?x4x8xf32>)
// CHECK: tensor.empty(%{{.*}}) : tensor<?x8x4xf32>
// CHECK: %[[T:.*]] = linalg.generic {indexing_maps = [#[[$SWAP]], #[[$ID]]]
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[$SWAP]], #[[$ID]]]
// CHECK: return %[[T]], %[[P]]
func.func private @transpose(%x: tensor<?x4x8xf32, #fxmlir.device<"cpu">>) -> (tensor<?x8x4xf32, #fxmlir.device<"cpu">>, tensor<?x8x4xf32, #fxmlir.device<"cpu">>) {
  %0 = fxmlir.aten.transpose.int %x {dim0 = 1 : i64, dim1 = -1 : i64} : (tensor<?x4x8xf32, #fxmlir.device<"cpu">>) -> tensor<?x8x4xf32, #fxmlir.device<"cpu">>
  %1 = fxmlir.aten.clone %0 {memory_format = "contiguous_format"} : (tensor<?x8x4xf32, #fxmlir.device<"cpu">>) -> tensor<?x8x4xf32, #fxmlir.device<"cpu">>
  %2 = fxmlir.aten.permute %x {dims = array<i64: 0, 2, 1>} : (tensor<?x4x8xf32, #fxmlir.device<"cpu">>) -> tensor<?x8x4xf32, #fxmlir.device<"cpu">>
  return %1, %2 : tensor<?x8x4xf32, #fxmlir.device<"cpu">>, tensor<?x8x4xf32, #fxmlir.device<"cpu">>
}

// -----

// nll_loss_backward: each row's target class gets -(grad / total_weight),
// the quotient rounded to the dtype first; ignore_index rows get zeros.
// CHECK-DAG: #[[$SCALAR:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func private @nll_loss_backward
// CHECK: linalg.generic {indexing_maps = [#[[$SCALAR]], #[[$ROW]], #[[$SCALAR]], #{{.*}}]
// CHECK: ^bb0(%[[G:.*]]: bf16, %[[T:.*]]: i64, %[[W:.*]]: bf16, %{{.*}}: bf16):
// CHECK: arith.divf
// CHECK: arith.truncf
// CHECK: arith.negf
// CHECK: %[[C:.*]] = linalg.index 1
// CHECK: %[[C64:.*]] = arith.index_cast %[[C]] : index to i64
// CHECK: %[[HIT:.*]] = arith.cmpi eq, %[[C64]], %[[T]]
// CHECK: %[[IGNORE:.*]] = arith.constant -100 : i64
// CHECK: arith.cmpi ne, %[[T]], %[[IGNORE]]
func.func private @nll_loss_backward(%g: tensor<bf16, #fxmlir.device<"cpu">>, %x: tensor<6x10xbf16, #fxmlir.device<"cpu">>, %t: tensor<6xsi64, #fxmlir.device<"cpu">>, %w: tensor<bf16, #fxmlir.device<"cpu">>) -> tensor<6x10xbf16, #fxmlir.device<"cpu">> {
  %none = fxmlir.none
  %0 = fxmlir.aten.nll_loss_backward %g, %x, %t, %none, %w {reduction = 1 : i64, ignore_index = -100 : i64} : (tensor<bf16, #fxmlir.device<"cpu">>, tensor<6x10xbf16, #fxmlir.device<"cpu">>, tensor<6xsi64, #fxmlir.device<"cpu">>, none, tensor<bf16, #fxmlir.device<"cpu">>) -> tensor<6x10xbf16, #fxmlir.device<"cpu">>
  return %0 : tensor<6x10xbf16, #fxmlir.device<"cpu">>
}
