// RUN: fxmlir-opt %s --fxmlir-fuse-linear-cross-entropy --split-input-file | FileCheck %s

!h = tensor<2x512x32xbf16, #fxmlir.device<"cpu">>
!w = tensor<2048x32xbf16, #fxmlir.device<"cpu">>
!z = tensor<2x512x2048xbf16, #fxmlir.device<"cpu">>
!zf = tensor<2x512x2048xf32, #fxmlir.device<"cpu">>
!rows = tensor<1024x2048xf32, #fxmlir.device<"cpu">>
!t = tensor<1024xsi64, #fxmlir.device<"cpu">>
!loss = tensor<f32, #fxmlir.device<"cpu">>

// transformers' causal-LM loss under autocast: bf16 logits, returned too,
// upcast for the loss. The fused op returns them (its backward then takes
// their gradient with the loss's); no float32 copy remains.
// CHECK-LABEL: func.func @causal_lm
// CHECK: %[[LOSS:.*]], %{{.*}}, %[[Z:.*]] = fxmlir.fused_linear_cross_entropy %arg0, %arg1, %{{.*}}, %arg2 {ignore_index = -100 : i64, reduction = 1 : i64, return_logits = true} : {{.*}} -> (tensor<f32, {{.*}}>, tensor<1024xf32, {{.*}}>, tensor<2x512x2048xbf16, {{.*}}>)
// CHECK-NOT: fxmlir.aten.linear
// CHECK-NOT: cross_entropy_loss
// CHECK: return %[[LOSS]], %[[Z]]
func.func @causal_lm(%h: !h, %w: !w, %t: !t) -> (!loss, !z) {
  %none = fxmlir.none
  %z = fxmlir.aten.linear %h, %w, %none : (!h, !w, none) -> !z
  %f = fxmlir.aten.to.dtype %z {copy = false, dtype = f32, non_blocking = false} : (!z) -> !zf
  %r = fxmlir.aten.view %f {size = array<i64: -1, 2048>} : (!zf) -> !rows
  %loss = fxmlir.aten.cross_entropy_loss %r, %t, %none {ignore_index = -100 : i64, label_smoothing = 0.0 : f64, reduction = 1 : i64} : (!rows, !t, none) -> !loss
  return %loss, %z : !loss, !z
}

// -----

!x = tensor<1024x32xbf16, #fxmlir.device<"cpu">>
!w = tensor<2048x32xbf16, #fxmlir.device<"cpu">>
!b = tensor<2048xbf16, #fxmlir.device<"cpu">>
!z = tensor<1024x2048xbf16, #fxmlir.device<"cpu">>
!rows = tensor<1024x2048xf32, #fxmlir.device<"cpu">>
!t = tensor<1024xsi64, #fxmlir.device<"cpu">>
!loss = tensor<f32, #fxmlir.device<"cpu">>

// Autocast made explicit: a bf16 layer with a bias, upcast by _to_copy,
// a sum; only the loss uses the logits, so the fused op computes them a
// block at a time and returns none ([0]).
// CHECK-LABEL: func.func @bf16_sum
// CHECK: %[[LOSS:.*]], %{{.*}}, %{{.*}} = fxmlir.fused_linear_cross_entropy %arg0, %arg1, %arg2, %arg3 {ignore_index = 0 : i64, reduction = 2 : i64, return_logits = false} : (tensor<1024x32xbf16, {{.*}}>, tensor<2048x32xbf16, {{.*}}>, tensor<2048xbf16, {{.*}}>, tensor<1024xsi64, {{.*}}>) -> (tensor<f32, {{.*}}>, tensor<1024xf32, {{.*}}>, tensor<0xbf16, {{.*}}>)
// CHECK-NOT: fxmlir.aten.linear
// CHECK: return %[[LOSS]]
func.func @bf16_sum(%x: !x, %w: !w, %b: !b, %t: !t) -> !loss {
  %none = fxmlir.none
  %z = fxmlir.aten.linear %x, %w, %b : (!x, !w, !b) -> !z
  %f = fxmlir.aten._to_copy %z {dtype = f32, non_blocking = false} : (!z) -> !rows
  %loss = fxmlir.aten.cross_entropy_loss %f, %t, %none {ignore_index = 0 : i64, label_smoothing = 0.0 : f64, reduction = 2 : i64} : (!rows, !t, none) -> !loss
  return %loss : !loss
}

// -----

!x = tensor<20x32xf32, #fxmlir.device<"cpu">>
!w = tensor<96x32xf32, #fxmlir.device<"cpu">>
!z = tensor<20x96xf32, #fxmlir.device<"cpu">>
!t = tensor<20xsi64, #fxmlir.device<"cpu">>
!cw = tensor<96xf32, #fxmlir.device<"cpu">>
!loss = tensor<f32, #fxmlir.device<"cpu">>
!each = tensor<20xf32, #fxmlir.device<"cpu">>

// Left alone: per-token losses, label smoothing, class weights, logits that
// are not a linear layer's, a cast of the logits used elsewhere, a loss in
// bf16 (no upcast), logits that fit in one block (%z2: 20 x 96); then
// float32 logits read besides the loss, and logits used before the loss.
// CHECK-LABEL: func.func @negatives
// CHECK-NOT: fused_linear_cross_entropy
// CHECK-COUNT-7: fxmlir.aten.cross_entropy_loss
func.func @negatives(%x: !x, %w: !w, %t: !t, %cw: !cw, %other: !z,
                     %xb: tensor<20x32xbf16, #fxmlir.device<"cpu">>,
                     %wb: tensor<96x32xbf16, #fxmlir.device<"cpu">>)
    -> (!each, !loss, !loss, !loss, !loss, !z, tensor<bf16, #fxmlir.device<"cpu">>, !loss, !z) {
  %none = fxmlir.none
  %z = fxmlir.aten.linear %x, %w, %none : (!x, !w, none) -> !z
  %0 = fxmlir.aten.cross_entropy_loss %z, %t, %none {ignore_index = -100 : i64, label_smoothing = 0.0 : f64, reduction = 0 : i64} : (!z, !t, none) -> !each
  %1 = fxmlir.aten.cross_entropy_loss %z, %t, %none {ignore_index = -100 : i64, label_smoothing = 0.1 : f64, reduction = 1 : i64} : (!z, !t, none) -> !loss
  %2 = fxmlir.aten.cross_entropy_loss %z, %t, %cw {ignore_index = -100 : i64, label_smoothing = 0.0 : f64, reduction = 1 : i64} : (!z, !t, !cw) -> !loss
  %3 = fxmlir.aten.cross_entropy_loss %other, %t, %none {ignore_index = -100 : i64, label_smoothing = 0.0 : f64, reduction = 1 : i64} : (!z, !t, none) -> !loss
  %f = fxmlir.aten.to.dtype %z {copy = false, dtype = f32, non_blocking = false} : (!z) -> !z
  %4 = fxmlir.aten.cross_entropy_loss %f, %t, %none {ignore_index = -100 : i64, label_smoothing = 0.0 : f64, reduction = 1 : i64} : (!z, !t, none) -> !loss
  %zb = fxmlir.aten.linear %xb, %wb, %none : (tensor<20x32xbf16, #fxmlir.device<"cpu">>, tensor<96x32xbf16, #fxmlir.device<"cpu">>, none) -> tensor<20x96xbf16, #fxmlir.device<"cpu">>
  %5 = fxmlir.aten.cross_entropy_loss %zb, %t, %none {ignore_index = -100 : i64, label_smoothing = 0.0 : f64, reduction = 1 : i64} : (tensor<20x96xbf16, #fxmlir.device<"cpu">>, !t, none) -> tensor<bf16, #fxmlir.device<"cpu">>
  %z2 = fxmlir.aten.linear %x, %w, %none : (!x, !w, none) -> !z
  %6 = fxmlir.aten.cross_entropy_loss %z2, %t, %none {ignore_index = -100 : i64, label_smoothing = 0.0 : f64, reduction = 1 : i64} : (!z, !t, none) -> !loss
  return %0, %1, %2, %3, %4, %f, %5, %6, %z2 : !each, !loss, !loss, !loss, !loss, !z, tensor<bf16, #fxmlir.device<"cpu">>, !loss, !z
}

// -----

!x = tensor<1024x32xf32, #fxmlir.device<"cpu">>
!w = tensor<2048x32xf32, #fxmlir.device<"cpu">>
!z = tensor<1024x2048xf32, #fxmlir.device<"cpu">>
!t = tensor<1024xsi64, #fxmlir.device<"cpu">>
!loss = tensor<f32, #fxmlir.device<"cpu">>

// Float32 logits the graph only returns fuse (the backend differentiates
// them outside the graph); read by another op besides, they are kept for
// backward either way, and fusing saves no memory.
// CHECK-LABEL: func.func @returned_f32
// CHECK: %[[LOSS:.*]], %{{.*}}, %[[Z:.*]] = fxmlir.fused_linear_cross_entropy {{.*}}return_logits = true
// CHECK: return %[[LOSS]], %[[Z]]
func.func @returned_f32(%x: !x, %w: !w, %t: !t) -> (!loss, !z) {
  %none = fxmlir.none
  %z = fxmlir.aten.linear %x, %w, %none : (!x, !w, none) -> !z
  %loss = fxmlir.aten.cross_entropy_loss %z, %t, %none {ignore_index = -100 : i64, label_smoothing = 0.0 : f64, reduction = 1 : i64} : (!z, !t, none) -> !loss
  return %loss, %z : !loss, !z
}

// CHECK-LABEL: func.func @read_f32
// CHECK-NOT: fused_linear_cross_entropy
// CHECK: fxmlir.aten.cross_entropy_loss
func.func @read_f32(%x: !x, %w: !w, %t: !t) -> (!loss, !z) {
  %none = fxmlir.none
  %z = fxmlir.aten.linear %x, %w, %none : (!x, !w, none) -> !z
  %loss = fxmlir.aten.cross_entropy_loss %z, %t, %none {ignore_index = -100 : i64, label_smoothing = 0.0 : f64, reduction = 1 : i64} : (!z, !t, none) -> !loss
  %r = fxmlir.aten.relu %z : (!z) -> !z
  return %loss, %r : !loss, !z
}

// -----

!x = tensor<1024x32xbf16, #fxmlir.device<"cpu">>
!w = tensor<2048x32xbf16, #fxmlir.device<"cpu">>
!z = tensor<1024x2048xbf16, #fxmlir.device<"cpu">>
!zf = tensor<1024x2048xf32, #fxmlir.device<"cpu">>
!t = tensor<1024xsi64, #fxmlir.device<"cpu">>
!loss = tensor<f32, #fxmlir.device<"cpu">>

// The fused op would stand where the loss is, after a use of the logits.
// CHECK-LABEL: func.func @used_before
// CHECK-NOT: fused_linear_cross_entropy
// CHECK: fxmlir.aten.cross_entropy_loss
func.func @used_before(%x: !x, %w: !w, %t: !t) -> (!loss, !z) {
  %none = fxmlir.none
  %z = fxmlir.aten.linear %x, %w, %none : (!x, !w, none) -> !z
  %r = fxmlir.aten.relu %z : (!z) -> !z
  %f = fxmlir.aten.to.dtype %z {copy = false, dtype = f32, non_blocking = false} : (!z) -> !zf
  %loss = fxmlir.aten.cross_entropy_loss %f, %t, %none {ignore_index = -100 : i64, label_smoothing = 0.0 : f64, reduction = 1 : i64} : (!zf, !t, none) -> !loss
  return %loss, %r : !loss, !z
}

// -----

!x = tensor<256x16xbf16, #fxmlir.device<"cpu">>
!w = tensor<8192x16xf32, #fxmlir.device<"cpu">>
!wb = tensor<8192x16xbf16, #fxmlir.device<"cpu">>
!z = tensor<256x8192xbf16, #fxmlir.device<"cpu">>
!zf = tensor<256x8192xf32, #fxmlir.device<"cpu">>
!t = tensor<256xsi64, #fxmlir.device<"cpu">>

// Autocast's cast of the float32 weight folds into the op, which casts each
// block as it reads it; a cast something else reads too stays, and so does
// the cast of a weight something else reads (tied to an embedding).
// CHECK-LABEL: func.func @weight_cast_folds
// CHECK-SAME: (%[[X:.*]]: tensor<256x16xbf16{{.*}}>, %[[W:.*]]: tensor<8192x16xf32{{.*}}>,
// CHECK-NOT: fxmlir.aten._to_copy
// CHECK: fxmlir.fused_linear_cross_entropy %[[X]], %[[W]],
func.func @weight_cast_folds(%x: !x, %w: !w, %t: !t) -> tensor<f32, #fxmlir.device<"cpu">> {
  %none = fxmlir.none
  %wb = fxmlir.aten._to_copy %w {dtype = bf16, non_blocking = false} : (!w) -> !wb
  %z = fxmlir.aten.linear %x, %wb, %none : (!x, !wb, none) -> !z
  %zf = fxmlir.aten._to_copy %z {dtype = f32, non_blocking = false} : (!z) -> !zf
  %l = fxmlir.aten.cross_entropy_loss %zf, %t, %none {ignore_index = -100 : i64, label_smoothing = 0.0 : f64, reduction = 1 : i64} : (!zf, !t, none) -> tensor<f32, #fxmlir.device<"cpu">>
  return %l : tensor<f32, #fxmlir.device<"cpu">>
}

// CHECK-LABEL: func.func @weight_cast_read_elsewhere
// CHECK: %[[WB:.*]] = fxmlir.aten._to_copy
// CHECK: fxmlir.fused_linear_cross_entropy %{{.*}}, %[[WB]],
func.func @weight_cast_read_elsewhere(%x: !x, %w: !w, %t: !t) -> (tensor<f32, #fxmlir.device<"cpu">>, !wb) {
  %none = fxmlir.none
  %wb = fxmlir.aten._to_copy %w {dtype = bf16, non_blocking = false} : (!w) -> !wb
  %z = fxmlir.aten.linear %x, %wb, %none : (!x, !wb, none) -> !z
  %zf = fxmlir.aten._to_copy %z {dtype = f32, non_blocking = false} : (!z) -> !zf
  %l = fxmlir.aten.cross_entropy_loss %zf, %t, %none {ignore_index = -100 : i64, label_smoothing = 0.0 : f64, reduction = 1 : i64} : (!zf, !t, none) -> tensor<f32, #fxmlir.device<"cpu">>
  return %l, %wb : tensor<f32, #fxmlir.device<"cpu">>, !wb
}

// CHECK-LABEL: func.func @tied_weight_keeps_its_cast
// CHECK: %[[WB:.*]] = fxmlir.aten._to_copy
// CHECK: fxmlir.fused_linear_cross_entropy %{{.*}}, %[[WB]],
func.func @tied_weight_keeps_its_cast(%x: !x, %w: !w, %t: !t, %ids: tensor<4xsi64, #fxmlir.device<"cpu">>)
    -> (tensor<f32, #fxmlir.device<"cpu">>, tensor<4x16xf32, #fxmlir.device<"cpu">>) {
  %none = fxmlir.none
  %e = fxmlir.aten.embedding %w, %ids {padding_idx = -1 : i64, scale_grad_by_freq = false, sparse = false} : (!w, tensor<4xsi64, #fxmlir.device<"cpu">>) -> tensor<4x16xf32, #fxmlir.device<"cpu">>
  %wb = fxmlir.aten._to_copy %w {dtype = bf16, non_blocking = false} : (!w) -> !wb
  %z = fxmlir.aten.linear %x, %wb, %none : (!x, !wb, none) -> !z
  %zf = fxmlir.aten._to_copy %z {dtype = f32, non_blocking = false} : (!z) -> !zf
  %l = fxmlir.aten.cross_entropy_loss %zf, %t, %none {ignore_index = -100 : i64, label_smoothing = 0.0 : f64, reduction = 1 : i64} : (!zf, !t, none) -> tensor<f32, #fxmlir.device<"cpu">>
  return %l, %e : tensor<f32, #fxmlir.device<"cpu">>, tensor<4x16xf32, #fxmlir.device<"cpu">>
}
