// RUN: fxmlir-opt %s --fxmlir-recompose | FileCheck %s
// A decomposition no fusion used round-trips to the original ops.
// RUN: fxmlir-opt %s --fxmlir-decompose --fxmlir-recompose | FileCheck %s --check-prefix=ROUNDTRIP

// CHECK-LABEL: func.func @mm
// CHECK: fxmlir.aten.addmm %arg0, %arg1, %arg2 {alpha = 1 : i64, beta = 1 : i64}
// CHECK-NOT: fxmlir.bias_add
// ROUNDTRIP-LABEL: func.func @mm
// ROUNDTRIP: fxmlir.aten.addmm %arg0, %arg1, %arg2 {alpha = 1 : i64, beta = 1 : i64}
// ROUNDTRIP-NOT: fxmlir.bias_add
func.func @mm(%b: tensor<64xf32>, %x: tensor<8x32xf32>, %w: tensor<32x64xf32>) -> tensor<8x64xf32> {
  %0 = fxmlir.aten.mm %x, %w : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
  %1 = fxmlir.bias_add %0, %b {axis = 1 : i64} : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %1 : tensor<8x64xf32>
}


// CHECK-LABEL: func.func @view_mm
// CHECK: %[[ADDMM:.*]] = fxmlir.aten.addmm %arg0, %arg1, %arg2
// CHECK: fxmlir.aten.view %[[ADDMM]] {size = array<i64: 2, 4, 64>}
// ROUNDTRIP-LABEL: func.func @view_mm
// ROUNDTRIP: %[[ADDMM:.*]] = fxmlir.aten.addmm %arg0, %arg1, %arg2
// ROUNDTRIP: fxmlir.aten.view %[[ADDMM]] {size = array<i64: 2, 4, 64>}
func.func @view_mm(%b: tensor<64xf32>, %x: tensor<8x32xf32>, %w: tensor<32x64xf32>) -> tensor<2x4x64xf32> {
  %0 = fxmlir.aten.mm %x, %w : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
  %1 = fxmlir.aten.view %0 {size = array<i64: 2, 4, 64>} : (tensor<8x64xf32>) -> tensor<2x4x64xf32>
  %2 = fxmlir.bias_add %1, %b {axis = 2 : i64} : (tensor<2x4x64xf32>, tensor<64xf32>) -> tensor<2x4x64xf32>
  return %2 : tensor<2x4x64xf32>
}


// A bias_add over something else becomes a broadcast add.
// CHECK-LABEL: func.func @other
// CHECK: fxmlir.aten.add.Tensor %arg0, %arg1 {alpha = 1 : i64}
func.func @other(%x: tensor<4x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}


// A bias on an inner axis has no ATen spelling as cheap: it stays.
// CHECK-LABEL: func.func @inner_axis
// CHECK: fxmlir.bias_add %arg0, %arg1 {axis = 0 : i64}
func.func @inner_axis(%x: tensor<16x4xf32>, %b: tensor<16xf32>) -> tensor<16x4xf32> {
  %0 = fxmlir.bias_add %x, %b {axis = 0 : i64} : (tensor<16x4xf32>, tensor<16xf32>) -> tensor<16x4xf32>
  return %0 : tensor<16x4xf32>
}

// A view that regroups the product's columns: the bias is not a bias of the
// product's columns, so no addmm (64 columns, 32 bias entries) is made.
// CHECK-LABEL: func.func @view_regroups_columns
// CHECK: %[[MM:.*]] = fxmlir.aten.mm %arg0, %arg1
// CHECK: %[[VIEW:.*]] = fxmlir.aten.view %[[MM]] {size = array<i64: 16, 32>}
// CHECK: fxmlir.aten.add.Tensor %[[VIEW]], %arg2
// CHECK-NOT: fxmlir.aten.addmm
// ROUNDTRIP-LABEL: func.func @view_regroups_columns
// ROUNDTRIP-NOT: fxmlir.aten.addmm
func.func @view_regroups_columns(%x: tensor<8x16xf32>, %w: tensor<16x64xf32>, %b: tensor<32xf32>) -> tensor<16x32xf32> {
  %0 = fxmlir.aten.mm %x, %w : (tensor<8x16xf32>, tensor<16x64xf32>) -> tensor<8x64xf32>
  %1 = fxmlir.aten.view %0 {size = array<i64: 16, 32>} : (tensor<8x64xf32>) -> tensor<16x32xf32>
  %2 = fxmlir.bias_add %1, %b {axis = 1 : i64} : (tensor<16x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  return %2 : tensor<16x32xf32>
}
