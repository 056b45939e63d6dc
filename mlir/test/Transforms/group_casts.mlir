// RUN: fxmlir-opt %s --fxmlir-group-casts --split-input-file | FileCheck %s

// A forward graph under autocast: each weight cast to bf16 where it is first
// read. The casts of inputs become one op, before the first of them; the
// activation's cast (not an input) stays.
// CHECK-LABEL: func.func @weights
// CHECK: %[[X:.*]] = fxmlir.aten._to_copy %{{.*}} {dtype = bf16
// CHECK: %[[W:.*]]:2 = fxmlir.cast_tensors %arg2, %arg1 {dtype = bf16}
// CHECK-SAME: (tensor<8x16xf32>, tensor<16x8xf32>) -> (tensor<8x16xbf16>, tensor<16x8xbf16>)
// CHECK: %[[MM:.*]] = fxmlir.aten.mm %[[X]], %[[W]]#0
// CHECK: fxmlir.aten.mm %[[MM]], %[[W]]#1
// CHECK-NOT: _to_copy
func.func @weights(%x: tensor<4x8xf32>, %w1: tensor<16x8xf32>, %w0: tensor<8x16xf32>) -> tensor<4x8xbf16> {
  %n = fxmlir.aten.neg %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %0 = fxmlir.aten._to_copy %n {dtype = bf16, non_blocking = false} : (tensor<4x8xf32>) -> tensor<4x8xbf16>
  %1 = fxmlir.aten._to_copy %w0 {dtype = bf16, non_blocking = false} : (tensor<8x16xf32>) -> tensor<8x16xbf16>
  %2 = fxmlir.aten.mm %0, %1 : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
  %3 = fxmlir.aten._to_copy %w1 {dtype = bf16, non_blocking = false} : (tensor<16x8xf32>) -> tensor<16x8xbf16>
  %4 = fxmlir.aten.mm %2, %3 : (tensor<4x16xbf16>, tensor<16x8xbf16>) -> tensor<4x8xbf16>
  return %4 : tensor<4x8xbf16>
}

// -----

// A backward graph returns its bf16 weight gradients cast to float32: one
// op, just before the return. A cast also read by another op stays.
#cpu = #fxmlir.device<"cpu">
// CHECK-LABEL: func.func @returned_gradients
// CHECK: %[[A:.*]] = fxmlir.aten.mm
// CHECK: %[[B:.*]] = fxmlir.aten.mm
// CHECK: %[[KEPT:.*]] = fxmlir.aten._to_copy %[[A]]
// CHECK: fxmlir.aten.neg %[[KEPT]]
// CHECK: %[[G:.*]]:2 = fxmlir.cast_tensors %[[B]], %[[A]] {dtype = f32}
// CHECK-NEXT: return %[[G]]#0, %[[G]]#1, %[[KEPT]]
func.func @returned_gradients(%g: tensor<8x4xbf16, #cpu>, %x: tensor<4x8xbf16, #cpu>) -> (tensor<8x8xf32, #cpu>, tensor<8x8xf32, #cpu>, tensor<8x8xf32, #cpu>, tensor<8x8xf32, #cpu>) {
  %0 = fxmlir.aten.mm %g, %x : (tensor<8x4xbf16, #cpu>, tensor<4x8xbf16, #cpu>) -> tensor<8x8xbf16, #cpu>
  %1 = fxmlir.aten.mm %g, %x : (tensor<8x4xbf16, #cpu>, tensor<4x8xbf16, #cpu>) -> tensor<8x8xbf16, #cpu>
  %2 = fxmlir.aten._to_copy %1 {device = #cpu, dtype = f32, layout = "strided", non_blocking = false} : (tensor<8x8xbf16, #cpu>) -> tensor<8x8xf32, #cpu>
  %3 = fxmlir.aten._to_copy %0 {dtype = f32, non_blocking = false} : (tensor<8x8xbf16, #cpu>) -> tensor<8x8xf32, #cpu>
  %4 = fxmlir.aten._to_copy %0 {dtype = f32, non_blocking = false} : (tensor<8x8xbf16, #cpu>) -> tensor<8x8xf32, #cpu>
  %5 = fxmlir.aten.neg %4 : (tensor<8x8xf32, #cpu>) -> tensor<8x8xf32, #cpu>
  return %2, %3, %4, %5 : tensor<8x8xf32, #cpu>, tensor<8x8xf32, #cpu>, tensor<8x8xf32, #cpu>, tensor<8x8xf32, #cpu>
}

// -----

// Negative: returned casts that narrow (a forward graph's saved keys and
// values cast to bf16) stay where they free their float32 inputs.
// CHECK-LABEL: func.func @narrowing_returns
// CHECK-NOT: cast_tensors
// CHECK: return
func.func @narrowing_returns(%a: tensor<4xf32>) -> (tensor<4xbf16>, tensor<4xbf16>) {
  %0 = fxmlir.aten.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  %1 = fxmlir.aten._to_copy %0 {dtype = bf16, non_blocking = false} : (tensor<4xf32>) -> tensor<4xbf16>
  %2 = fxmlir.aten.exp %0 : (tensor<4xf32>) -> tensor<4xf32>
  %3 = fxmlir.aten._to_copy %2 {dtype = bf16, non_blocking = false} : (tensor<4xf32>) -> tensor<4xbf16>
  return %1, %3 : tensor<4xbf16>, tensor<4xbf16>
}

// -----

// Negative: one cast of each kind is left as it is; casts to another layout
// or memory format, non-blocking ones, and casts inside a JIT region's body
// are not grouped; nor are casts to different dtypes or devices.
// CHECK-LABEL: func.func @ungrouped
// CHECK-NOT: cast_tensors
// CHECK: return
func.func @ungrouped(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32, #fxmlir.device<"cuda:0">>,
                     %d: tensor<4xf32>, %e: tensor<4xf32>) -> (tensor<4xbf16>, tensor<4xf16>, tensor<4xbf16, #fxmlir.device<"cuda:0">>, tensor<4xbf16>, tensor<4xbf16>) {
  %0 = fxmlir.aten._to_copy %a {dtype = bf16, non_blocking = false} : (tensor<4xf32>) -> tensor<4xbf16>
  %1 = fxmlir.aten._to_copy %b {dtype = f16, non_blocking = false} : (tensor<4xf32>) -> tensor<4xf16>
  %2 = fxmlir.aten._to_copy %c {dtype = bf16, non_blocking = false} : (tensor<4xf32, #fxmlir.device<"cuda:0">>) -> tensor<4xbf16, #fxmlir.device<"cuda:0">>
  %3 = fxmlir.aten._to_copy %d {dtype = bf16, non_blocking = true} : (tensor<4xf32>) -> tensor<4xbf16>
  %4 = fxmlir.aten._to_copy %e {dtype = bf16, memory_format = "contiguous_format", non_blocking = false} : (tensor<4xf32>) -> tensor<4xbf16>
  return %0, %1, %2, %3, %4 : tensor<4xbf16>, tensor<4xf16>, tensor<4xbf16, #fxmlir.device<"cuda:0">>, tensor<4xbf16>, tensor<4xbf16>
}

// CHECK-LABEL: func.func private @jit_region
// CHECK-NOT: cast_tensors
func.func private @jit_region(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xbf16>, tensor<4xbf16>) {
  %0 = fxmlir.aten._to_copy %a {dtype = bf16, non_blocking = false} : (tensor<4xf32>) -> tensor<4xbf16>
  %1 = fxmlir.aten._to_copy %b {dtype = bf16, non_blocking = false} : (tensor<4xf32>) -> tensor<4xbf16>
  return %0, %1 : tensor<4xbf16>, tensor<4xbf16>
}
