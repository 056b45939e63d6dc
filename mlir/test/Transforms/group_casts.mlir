// RUN: fxmlir-opt %s --fxmlir-group-casts --split-input-file | FileCheck %s

#gpu = #fxmlir.device<"cuda:0">

// A forward graph under autocast: each weight cast to bf16 where it is first
// read, and saved for backward (returned, itself or transposed); a bias's
// cast read once. The casts of inputs become one op, before the first of
// them; the activation's cast (not an input) stays.
// CHECK-LABEL: func.func @weights
// CHECK: %[[X:.*]] = fxmlir.aten._to_copy %{{.*}} {dtype = bf16
// CHECK: %[[W:.*]]:3 = fxmlir.cast_tensors %arg2, %arg1, %arg3 {dtype = bf16}
// CHECK-SAME: (tensor<8x16xf32, #fxmlir.device<"cuda:0">>, tensor<16x8xf32, #fxmlir.device<"cuda:0">>, tensor<8xf32, #fxmlir.device<"cuda:0">>)
// CHECK: %[[MM:.*]] = fxmlir.aten.mm %[[X]], %[[W]]#0
// CHECK: %[[T:.*]] = fxmlir.aten.t %[[W]]#1
// CHECK: fxmlir.aten.mm %[[MM]], %[[W]]#1
// CHECK: fxmlir.bias_add %{{.*}}, %[[W]]#2
// CHECK-NOT: _to_copy
// CHECK: return %{{.*}}, %[[W]]#0, %[[T]]
func.func @weights(%x: tensor<4x8xf32, #gpu>, %w1: tensor<16x8xf32, #gpu>, %w0: tensor<8x16xf32, #gpu>, %b: tensor<8xf32, #gpu>)
    -> (tensor<4x8xbf16, #gpu>, tensor<8x16xbf16, #gpu>, tensor<8x16xbf16, #gpu>) {
  %n = fxmlir.aten.neg %x : (tensor<4x8xf32, #gpu>) -> tensor<4x8xf32, #gpu>
  %0 = fxmlir.aten._to_copy %n {dtype = bf16, non_blocking = false} : (tensor<4x8xf32, #gpu>) -> tensor<4x8xbf16, #gpu>
  %1 = fxmlir.aten._to_copy %w0 {dtype = bf16, non_blocking = false} : (tensor<8x16xf32, #gpu>) -> tensor<8x16xbf16, #gpu>
  %2 = fxmlir.aten.mm %0, %1 : (tensor<4x8xbf16, #gpu>, tensor<8x16xbf16, #gpu>) -> tensor<4x16xbf16, #gpu>
  %3 = fxmlir.aten._to_copy %w1 {dtype = bf16, non_blocking = false} : (tensor<16x8xf32, #gpu>) -> tensor<16x8xbf16, #gpu>
  %4 = fxmlir.aten.t %3 : (tensor<16x8xbf16, #gpu>) -> tensor<8x16xbf16, #gpu>
  %5 = fxmlir.aten.mm %2, %3 : (tensor<4x16xbf16, #gpu>, tensor<16x8xbf16, #gpu>) -> tensor<4x8xbf16, #gpu>
  %6 = fxmlir.aten._to_copy %b {dtype = bf16, non_blocking = false} : (tensor<8xf32, #gpu>) -> tensor<8xbf16, #gpu>
  %7 = fxmlir.bias_add %5, %6 {axis = 1 : i64} : (tensor<4x8xbf16, #gpu>, tensor<8xbf16, #gpu>) -> tensor<4x8xbf16, #gpu>
  return %7, %1, %4 : tensor<4x8xbf16, #gpu>, tensor<8x16xbf16, #gpu>, tensor<8x16xbf16, #gpu>
}

// -----

#gpu = #fxmlir.device<"cuda:0">

// Negative: a backward graph that recomputes its weights' casts, each dead
// after its product, keeps them where they are (grouped, every cast would
// live from the graph's start, its peak); its weight gradients' casts back
// to float32 stay beside their products too.
// CHECK-LABEL: func.func @recomputed_weights
// CHECK-NOT: cast_tensors
// CHECK: return
func.func @recomputed_weights(%g: tensor<4x16xbf16, #gpu>, %w0: tensor<8x16xf32, #gpu>, %w1: tensor<16x8xf32, #gpu>)
    -> (tensor<4x16xbf16, #gpu>, tensor<16x16xf32, #gpu>) {
  %0 = fxmlir.aten._to_copy %w1 {dtype = bf16, non_blocking = false} : (tensor<16x8xf32, #gpu>) -> tensor<16x8xbf16, #gpu>
  %1 = fxmlir.aten.mm %g, %0 : (tensor<4x16xbf16, #gpu>, tensor<16x8xbf16, #gpu>) -> tensor<4x8xbf16, #gpu>
  %2 = fxmlir.aten._to_copy %w0 {dtype = bf16, non_blocking = false} : (tensor<8x16xf32, #gpu>) -> tensor<8x16xbf16, #gpu>
  %3 = fxmlir.aten.mm %1, %2 : (tensor<4x8xbf16, #gpu>, tensor<8x16xbf16, #gpu>) -> tensor<4x16xbf16, #gpu>
  %4 = fxmlir.aten.t %g : (tensor<4x16xbf16, #gpu>) -> tensor<16x4xbf16, #gpu>
  %5 = fxmlir.aten.mm %4, %3 : (tensor<16x4xbf16, #gpu>, tensor<4x16xbf16, #gpu>) -> tensor<16x16xbf16, #gpu>
  %6 = fxmlir.aten._to_copy %5 {dtype = f32, non_blocking = false} : (tensor<16x16xbf16, #gpu>) -> tensor<16x16xf32, #gpu>
  return %3, %6 : tensor<4x16xbf16, #gpu>, tensor<16x16xf32, #gpu>
}

// -----

// Negative: a CPU graph's casts stay beside their products, which read them
// while they are in cache.
// CHECK-LABEL: func.func @cpu_weights
// CHECK-NOT: cast_tensors
// CHECK: return
func.func @cpu_weights(%x: tensor<4x8xbf16>, %w0: tensor<8x16xf32>, %w1: tensor<16x8xf32>)
    -> (tensor<4x8xbf16>, tensor<8x16xbf16>, tensor<16x8xbf16>) {
  %0 = fxmlir.aten._to_copy %w0 {dtype = bf16, non_blocking = false} : (tensor<8x16xf32>) -> tensor<8x16xbf16>
  %1 = fxmlir.aten.mm %x, %0 : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
  %2 = fxmlir.aten._to_copy %w1 {dtype = bf16, non_blocking = false} : (tensor<16x8xf32>) -> tensor<16x8xbf16>
  %3 = fxmlir.aten.mm %1, %2 : (tensor<4x16xbf16>, tensor<16x8xbf16>) -> tensor<4x8xbf16>
  return %3, %0, %2 : tensor<4x8xbf16>, tensor<8x16xbf16>, tensor<16x8xbf16>
}

// -----

#gpu = #fxmlir.device<"cuda:0">

// Negative: %a's cast would group with any other of the graph's casts to
// bf16 on cuda:0; each is of another kind (another layout or memory format,
// into pinned memory), and the rest go to another dtype or device.
// CHECK-LABEL: func.func @ungrouped
// CHECK-NOT: cast_tensors
// CHECK: return
func.func @ungrouped(%a: tensor<4xf32, #gpu>, %b: tensor<4xf32, #gpu>, %c: tensor<4xf32, #fxmlir.device<"cuda:1">>,
                     %d: tensor<4xf32, #gpu>, %e: tensor<4xf32, #gpu>, %f: tensor<4xf32, #gpu>)
    -> (tensor<4xbf16, #gpu>, tensor<4xf16, #gpu>, tensor<4xbf16, #fxmlir.device<"cuda:1">>, tensor<4xbf16, #gpu>, tensor<4xbf16, #gpu>, tensor<4xbf16, #gpu>) {
  %0 = fxmlir.aten._to_copy %a {dtype = bf16, non_blocking = false} : (tensor<4xf32, #gpu>) -> tensor<4xbf16, #gpu>
  %1 = fxmlir.aten._to_copy %b {dtype = f16, non_blocking = false} : (tensor<4xf32, #gpu>) -> tensor<4xf16, #gpu>
  %2 = fxmlir.aten._to_copy %c {dtype = bf16, non_blocking = false} : (tensor<4xf32, #fxmlir.device<"cuda:1">>) -> tensor<4xbf16, #fxmlir.device<"cuda:1">>
  %3 = fxmlir.aten._to_copy %d {dtype = bf16, layout = "sparse_coo", non_blocking = false} : (tensor<4xf32, #gpu>) -> tensor<4xbf16, #gpu>
  %4 = fxmlir.aten._to_copy %e {dtype = bf16, memory_format = "contiguous_format", non_blocking = false} : (tensor<4xf32, #gpu>) -> tensor<4xbf16, #gpu>
  %5 = fxmlir.aten._to_copy %f {dtype = bf16, non_blocking = false, pin_memory = true} : (tensor<4xf32, #gpu>) -> tensor<4xbf16, #gpu>
  return %0, %1, %2, %3, %4, %5 : tensor<4xbf16, #gpu>, tensor<4xf16, #gpu>, tensor<4xbf16, #fxmlir.device<"cuda:1">>, tensor<4xbf16, #gpu>, tensor<4xbf16, #gpu>, tensor<4xbf16, #gpu>
}

// -----

#gpu = #fxmlir.device<"cuda:0">

// A non-blocking cast on one device is a blocking one: the two group.
// CHECK-LABEL: func.func @non_blocking
// CHECK: fxmlir.cast_tensors %arg0, %arg1 {dtype = bf16}
// CHECK-NOT: _to_copy
func.func @non_blocking(%a: tensor<4xf32, #gpu>, %b: tensor<4xf32, #gpu>) -> (tensor<4xbf16, #gpu>, tensor<4xbf16, #gpu>) {
  %0 = fxmlir.aten._to_copy %a {dtype = bf16, non_blocking = true} : (tensor<4xf32, #gpu>) -> tensor<4xbf16, #gpu>
  %1 = fxmlir.aten._to_copy %b {dtype = bf16, non_blocking = false} : (tensor<4xf32, #gpu>) -> tensor<4xbf16, #gpu>
  return %0, %1 : tensor<4xbf16, #gpu>, tensor<4xbf16, #gpu>
}

// -----

#gpu = #fxmlir.device<"cuda:0">

// Negative: a JIT region's body casts in its loops.
// CHECK-LABEL: func.func private @jit_region
// CHECK-NOT: cast_tensors
func.func private @jit_region(%a: tensor<4xf32, #gpu>, %b: tensor<4xf32, #gpu>) -> (tensor<4xbf16, #gpu>, tensor<4xbf16, #gpu>) {
  %0 = fxmlir.aten._to_copy %a {dtype = bf16, non_blocking = false} : (tensor<4xf32, #gpu>) -> tensor<4xbf16, #gpu>
  %1 = fxmlir.aten._to_copy %b {dtype = bf16, non_blocking = false} : (tensor<4xf32, #gpu>) -> tensor<4xbf16, #gpu>
  return %0, %1 : tensor<4xbf16, #gpu>, tensor<4xbf16, #gpu>
}
