// RUN: fxmlir-opt %s -split-input-file --fxmlir-outline-jit-regions="cost-model=true" | FileCheck %s
// RUN: fxmlir-opt %s -split-input-file --fxmlir-outline-jit-regions="cost-model=true min-ops=1" | FileCheck %s --check-prefix=ONE
// RUN: fxmlir-opt %s -split-input-file --fxmlir-outline-jit-regions="min-ops=1" | FileCheck %s --check-prefix=ALL

// The cost model counts bytes: each eager op reads its operands and writes
// its results, plus a call's overhead; a region reads its inputs and writes
// its outputs once, plus one call.

!t = tensor<8x64xf32, #fxmlir.device<"cpu">>

// A chain pays: two intermediates and two calls saved.
// CHECK-LABEL: func.func @chain
// CHECK: fxmlir.mlir_jit @jit_add_tanh_mul
// ALL-LABEL: func.func @chain
// ALL: fxmlir.mlir_jit @jit_add_tanh_mul
func.func @chain(%a: !t, %b: !t, %c: !t) -> !t {
  %0 = fxmlir.aten.add.Tensor %a, %b {alpha = 1 : i64} : (!t, !t) -> !t
  %1 = fxmlir.aten.tanh %0 : (!t) -> !t
  %2 = fxmlir.aten.mul.Tensor %1, %c : (!t, !t) -> !t
  return %2 : !t
}

// -----

!t = tensor<8x64xf32, #fxmlir.device<"cpu">>

// One elementwise op alone saves nothing: the same bytes, the same call.
// ONE-LABEL: func.func @lone_op
// ONE-NOT: fxmlir.mlir_jit
// ALL-LABEL: func.func @lone_op
// ALL: fxmlir.mlir_jit @jit_tanh
func.func @lone_op(%a: !t) -> !t {
  %0 = fxmlir.aten.tanh %a : (!t) -> !t
  return %0 : !t
}

// -----

!t = tensor<1024x1024xf32, #fxmlir.device<"cpu">>

// A lone softmax moves eager's bytes at the JIT's slower pace for row
// reductions: it stays eager's kernel.
// ONE-LABEL: func.func @lone_softmax
// ONE-NOT: fxmlir.mlir_jit
// ONE: fxmlir.aten._softmax
// ALL-LABEL: func.func @lone_softmax
// ALL: fxmlir.mlir_jit @jit_softmax
func.func @lone_softmax(%x: !t) -> !t {
  %0 = fxmlir.aten._softmax %x {dim = -1 : i64, half_to_float = false} : (!t) -> !t
  return %0 : !t
}

// -----

!t = tensor<1024x1024xf32, #fxmlir.device<"cpu">>

// With the scaling before it and the mask after it, the softmax's region
// saves two full tensors' round trips, more than its slower rows cost.
// CHECK-LABEL: func.func @scaled_masked_softmax
// CHECK-NEXT: fxmlir.mlir_jit @jit_mul_softmax
// CHECK-NEXT: return
func.func @scaled_masked_softmax(%x: !t, %m: !t) -> !t {
  %s = fxmlir.aten.mul.Scalar %x {other = 1.250000e-01 : f64} : (!t) -> !t
  %0 = fxmlir.aten._softmax %s {dim = -1 : i64, half_to_float = false} : (!t) -> !t
  %1 = fxmlir.aten.mul.Tensor %0, %m : (!t, !t) -> !t
  return %1 : !t
}

// -----

!t = tensor<2x8x128x64xf32, #fxmlir.device<"cpu">>
!s = tensor<2x8x64x128xf32, #fxmlir.device<"cpu">>

// A view that moves the innermost dim is free in eager (its elementwise
// kernels keep the operand's strides) and makes the region write across
// rows: a key cache's transpose and scale stays eager's.
// CHECK-LABEL: func.func @inner_transpose
// CHECK-NOT: fxmlir.mlir_jit
// CHECK: fxmlir.aten.tanh
// ALL-LABEL: func.func @inner_transpose
// ALL: fxmlir.mlir_jit @jit_mul_tanh
func.func @inner_transpose(%x: !t) -> !s {
  %0 = fxmlir.aten.transpose.int %x {dim0 = -2 : i64, dim1 = -1 : i64} : (!t) -> !s
  %1 = fxmlir.aten.mul.Scalar %0 {other = 0.125 : f64} : (!s) -> !s
  %2 = fxmlir.aten.tanh %1 : (!s) -> !s
  return %2 : !s
}

// -----

!t = tensor<2x128x8x64xf32, #fxmlir.device<"cpu">>
!s = tensor<2x8x128x64xf32, #fxmlir.device<"cpu">>

// Moving outer dims keeps each row whole: the chain still pays.
// CHECK-LABEL: func.func @outer_transpose
// CHECK: fxmlir.mlir_jit @jit_mul_tanh
func.func @outer_transpose(%x: !t) -> !s {
  %0 = fxmlir.aten.transpose.int %x {dim0 = 1 : i64, dim1 = 2 : i64} : (!t) -> !s
  %1 = fxmlir.aten.mul.Scalar %0 {other = 0.125 : f64} : (!s) -> !s
  %2 = fxmlir.aten.tanh %1 : (!s) -> !s
  return %2 : !s
}

// -----

!t = tensor<2x128x512xbf16, #fxmlir.device<"cpu">>
!r = tensor<512xbf16, #fxmlir.device<"cpu">>
!f = tensor<512xf32, #fxmlir.device<"cpu">>

// A bias gradient's sum over few rows and its cast: the calls outweigh the
// unsplit reduction, which runs at its bytes' pace.
// CHECK-LABEL: func.func @small_bias_grad
// CHECK: fxmlir.mlir_jit @jit_sum_to_copy
func.func @small_bias_grad(%g: !t) -> !f {
  %0 = fxmlir.aten.sum.dim_IntList %g {dim = array<i64: 0, 1>, keepdim = false} : (!t) -> !r
  %1 = fxmlir.aten._to_copy %0 {dtype = f32, non_blocking = false} : (!r) -> !f
  return %1 : !f
}

// -----

!t = tensor<16x256x512xf32, #fxmlir.device<"cpu">>
!r = tensor<512xf32, #fxmlir.device<"cpu">>
!h = tensor<512xbf16, #fxmlir.device<"cpu">>

// Over many rows the unsplit reduction is slower than eager's: it stays.
// CHECK-LABEL: func.func @large_bias_grad
// CHECK-NOT: fxmlir.mlir_jit
// CHECK: fxmlir.aten.sum.dim_IntList
// ALL-LABEL: func.func @large_bias_grad
// ALL: fxmlir.mlir_jit @jit_sum_to_copy
func.func @large_bias_grad(%g: !t) -> !h {
  %0 = fxmlir.aten.sum.dim_IntList %g {dim = array<i64: 0, 1>, keepdim = false} : (!t) -> !r
  %1 = fxmlir.aten._to_copy %0 {dtype = bf16, non_blocking = false} : (!r) -> !h
  return %1 : !h
}
