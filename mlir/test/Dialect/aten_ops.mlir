// Ops generated from ATen schemas (AtenOps.td) parse, print, and parse again
// unchanged, in custom and generic form: operands in schema order (`Tensor[]`
// and `Tensor?[]` in brackets), every other argument an attribute, `T?`
// attributes absent when None.
// RUN: fxmlir-opt %s | fxmlir-opt | FileCheck %s
// RUN: fxmlir-opt %s --mlir-print-op-generic | fxmlir-opt | FileCheck %s

!x = tensor<8x16xf32, #fxmlir.device<"cpu">>
!w = tensor<32x16xf32, #fxmlir.device<"cpu">>
!y = tensor<8x32xf32, #fxmlir.device<"cpu">>
!b = tensor<32xf32, #fxmlir.device<"cpu">>
!m = tensor<8x16xi1, #fxmlir.device<"cpu">>
!s = tensor<8x1xf32, #fxmlir.device<"cpu">>

// CHECK-LABEL: func.func @linear
func.func @linear(%x: !x, %wt: tensor<16x32xf32, #fxmlir.device<"cpu">>, %b: !b) -> !y {
  // CHECK: fxmlir.aten.addmm %{{.*}}, %{{.*}}, %{{.*}} {alpha = 1 : i64, beta = 1.000000e+00 : f64}
  // CHECK-SAME: : (tensor<32xf32, #fxmlir.device<"cpu">>, tensor<8x16xf32, #fxmlir.device<"cpu">>, tensor<16x32xf32, #fxmlir.device<"cpu">>) -> tensor<8x32xf32, #fxmlir.device<"cpu">>
  %0 = fxmlir.aten.addmm %b, %x, %wt {alpha = 1 : i64, beta = 1.0 : f64}
      : (!b, !x, tensor<16x32xf32, #fxmlir.device<"cpu">>) -> !y
  return %0 : !y
}

// CHECK-LABEL: func.func @dropout
func.func @dropout(%x: !x) -> (!x, !m) {
  // CHECK: = fxmlir.aten.native_dropout %{{.*}} {p = 1.000000e-01 : f64, train = true}
  // CHECK-SAME: -> (tensor<8x16xf32, #fxmlir.device<"cpu">>, tensor<8x16xi1, #fxmlir.device<"cpu">>)
  %0:2 = fxmlir.aten.native_dropout %x {p = 0.1 : f64, train = true} : (!x) -> (!x, !m)
  return %0#0, %0#1 : !x, !m
}

// CHECK-LABEL: func.func @layer_norm
func.func @layer_norm(%x: !x, %w: tensor<16xf32, #fxmlir.device<"cpu">>) -> (!x, !s, !s) {
  // CHECK: %[[NONE:.*]] = fxmlir.none
  // CHECK: = fxmlir.aten.native_layer_norm %{{.*}}, %{{.*}}, %[[NONE]] {eps = 1.000000e-05 : f64, normalized_shape = array<i64: 16>}
  // CHECK-SAME: : (tensor<8x16xf32, #fxmlir.device<"cpu">>, tensor<16xf32, #fxmlir.device<"cpu">>, none)
  %none = fxmlir.none
  %0:3 = fxmlir.aten.native_layer_norm %x, %w, %none {eps = 1.0e-05 : f64, normalized_shape = array<i64: 16>}
      : (!x, tensor<16xf32, #fxmlir.device<"cpu">>, none) -> (!x, !s, !s)
  return %0#0, %0#1, %0#2 : !x, !s, !s
}

// CHECK-LABEL: func.func @conv
func.func @conv(%x: tensor<2x3x?x?xf16, #fxmlir.device<"cuda:0">>,
                %w: tensor<8x3x3x3xf16, #fxmlir.device<"cuda:0">>)
    -> tensor<2x8x?x?xf16, #fxmlir.device<"cuda:0">> {
  // CHECK: %[[NONE:.*]] = fxmlir.none
  // CHECK: fxmlir.aten.convolution %{{.*}}, %{{.*}}, %[[NONE]] {dilation = array<i64: 1, 1>, groups = 1 : i64, output_padding = array<i64: 0, 0>, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>, transposed = false}
  %none = fxmlir.none
  %0 = fxmlir.aten.convolution %x, %w, %none {dilation = array<i64: 1, 1>, groups = 1 : i64,
        output_padding = array<i64: 0, 0>, padding = array<i64: 1, 1>,
        stride = array<i64: 1, 1>, transposed = false}
      : (tensor<2x3x?x?xf16, #fxmlir.device<"cuda:0">>, tensor<8x3x3x3xf16, #fxmlir.device<"cuda:0">>, none)
      -> tensor<2x8x?x?xf16, #fxmlir.device<"cuda:0">>
  return %0 : tensor<2x8x?x?xf16, #fxmlir.device<"cuda:0">>
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: !x) -> (tensor<8x1xf64, #fxmlir.device<"cpu">>, tensor<f32, #fxmlir.device<"cpu">>) {
  // CHECK: fxmlir.aten.sum.dim_IntList %{{.*}} {dim = array<i64: -1>, dtype = f64, keepdim = true}
  %0 = fxmlir.aten.sum.dim_IntList %x {dim = array<i64: -1>, dtype = f64, keepdim = true}
      : (!x) -> tensor<8x1xf64, #fxmlir.device<"cpu">>
  // Optional attributes absent: dim=None sums everything, dtype=None keeps f32.
  // CHECK: fxmlir.aten.sum.dim_IntList %{{.*}} {keepdim = false} : (tensor<8x16xf32, #fxmlir.device<"cpu">>) -> tensor<f32, #fxmlir.device<"cpu">>
  %1 = fxmlir.aten.sum.dim_IntList %x {keepdim = false} : (!x) -> tensor<f32, #fxmlir.device<"cpu">>
  return %0, %1 : tensor<8x1xf64, #fxmlir.device<"cpu">>, tensor<f32, #fxmlir.device<"cpu">>
}

// CHECK-LABEL: func.func @lists
func.func @lists(%x: !x, %i: tensor<4xsi64, #fxmlir.device<"cpu">>)
    -> (tensor<16x16xf32, #fxmlir.device<"cpu">>, tensor<4x16xf32, #fxmlir.device<"cpu">>, !s) {
  // CHECK: fxmlir.aten.cat [%{{.*}}, %{{.*}}] {dim = 0 : i64}
  %0 = fxmlir.aten.cat [%x, %x] {dim = 0 : i64} : (!x, !x) -> tensor<16x16xf32, #fxmlir.device<"cpu">>
  // CHECK: %[[NONE:.*]] = fxmlir.none
  // CHECK: fxmlir.aten.index.Tensor %{{.*}}, [%{{.*}}, %[[NONE]]] : (tensor<8x16xf32, #fxmlir.device<"cpu">>, tensor<4xsi64, #fxmlir.device<"cpu">>, none)
  %none = fxmlir.none
  %1 = fxmlir.aten.index.Tensor %x, [%i, %none]
      : (!x, tensor<4xsi64, #fxmlir.device<"cpu">>, none) -> tensor<4x16xf32, #fxmlir.device<"cpu">>
  // A Tensor[] result is variadic.
  // CHECK: = fxmlir.aten.split.Tensor %{{.*}} {dim = 1 : i64, split_size = 1 : i64}
  %2:16 = fxmlir.aten.split.Tensor %x {dim = 1 : i64, split_size = 1 : i64}
      : (!x) -> (!s, !s, !s, !s, !s, !s, !s, !s, !s, !s, !s, !s, !s, !s, !s, !s)
  return %0, %1, %2#15 : tensor<16x16xf32, #fxmlir.device<"cpu">>, tensor<4x16xf32, #fxmlir.device<"cpu">>, !s
}

// CHECK-LABEL: func.func @factories
func.func @factories() -> (tensor<2x3xbf16, #fxmlir.device<"cuda:0">>, i64) {
  // CHECK: fxmlir.aten.full {device = #fxmlir.device<"cuda:0">, dtype = bf16, fill_value = 5.000000e-01 : f64, layout = "strided", size = array<i64: 2, 3>} : () -> tensor<2x3xbf16, #fxmlir.device<"cuda:0">>
  %0 = fxmlir.aten.full {device = #fxmlir.device<"cuda:0">, dtype = bf16, fill_value = 0.5 : f64,
                         layout = "strided", size = array<i64: 2, 3>}
      : () -> tensor<2x3xbf16, #fxmlir.device<"cuda:0">>
  // A SymInt result is an i64 value.
  // CHECK: fxmlir.aten.sym_size.int %{{.*}} {dim = 0 : i64} : (tensor<2x3xbf16, #fxmlir.device<"cuda:0">>) -> i64
  %1 = fxmlir.aten.sym_size.int %0 {dim = 0 : i64} : (tensor<2x3xbf16, #fxmlir.device<"cuda:0">>) -> i64
  return %0, %1 : tensor<2x3xbf16, #fxmlir.device<"cuda:0">>, i64
}

// Shape rules accept torch's broadcasting, dynamic dims, inferred view dims
// and negative dims.
// A graph's symbolic sizes are dynamic entries of a view's size: the
// result's size in that dim (one symbol or two, beside a static size).
// CHECK-LABEL: func.func @symbolic_view_sizes
// CHECK: size = array<i64: -9223372036854775808, -9223372036854775808, 128>
func.func @symbolic_view_sizes(%y: tensor<?x128xf32>) -> tensor<?x?x128xf32> {
  %0 = fxmlir.aten.view %y {size = array<i64: -9223372036854775808, -9223372036854775808, 128>} : (tensor<?x128xf32>) -> tensor<?x?x128xf32>
  return %0 : tensor<?x?x128xf32>
}

// CHECK-LABEL: func.func @shape_rules
func.func @shape_rules(%a: tensor<?x1x4xf32>, %b: tensor<3x1xf32>, %x: tensor<?x16xf32>,
                       %w: tensor<16x?xf32>, %bias: tensor<?xf32>, %t: tensor<2x3x4xf32>)
    -> (tensor<?x3x4xf32>, tensor<?x?xf32>, tensor<?x2x8xf32>, tensor<4x3x2xf32>,
        tensor<5x2x3x4xf32>, tensor<2x3x1x4xf32>, tensor<4x3x2xf32>) {
  // CHECK: fxmlir.aten.add.Tensor
  %0 = fxmlir.aten.add.Tensor %a, %b {alpha = 1 : i64} : (tensor<?x1x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xf32>
  // CHECK: fxmlir.aten.addmm
  %1 = fxmlir.aten.addmm %bias, %x, %w {alpha = 1 : i64, beta = 1 : i64} : (tensor<?xf32>, tensor<?x16xf32>, tensor<16x?xf32>) -> tensor<?x?xf32>
  // CHECK: fxmlir.aten.view
  %2 = fxmlir.aten.view %t {size = array<i64: -1, 2, 8>} : (tensor<2x3x4xf32>) -> tensor<?x2x8xf32>
  // CHECK: fxmlir.aten.transpose.int
  %3 = fxmlir.aten.transpose.int %t {dim0 = -1 : i64, dim1 = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  // CHECK: fxmlir.aten.expand
  %4 = fxmlir.aten.expand %t {implicit = false, size = array<i64: 5, -1, 3, 4>} : (tensor<2x3x4xf32>) -> tensor<5x2x3x4xf32>
  // CHECK: fxmlir.aten.unsqueeze
  %5 = fxmlir.aten.unsqueeze %t {dim = -2 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x1x4xf32>
  // CHECK: fxmlir.aten.permute
  %6 = fxmlir.aten.permute %t {dims = array<i64: 2, 1, 0>} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<?x3x4xf32>, tensor<?x?xf32>, tensor<?x2x8xf32>, tensor<4x3x2xf32>, tensor<5x2x3x4xf32>, tensor<2x3x1x4xf32>, tensor<4x3x2xf32>
}
