// RUN: fxmlir-opt %s --fxmlir-decompose | FileCheck %s

!x = tensor<8x32xf32, #fxmlir.device<"cpu">>
!w = tensor<32x64xf32, #fxmlir.device<"cpu">>
!y = tensor<8x64xf32, #fxmlir.device<"cpu">>
!b = tensor<64xf32, #fxmlir.device<"cpu">>

// CHECK-LABEL: func.func @addmm
// CHECK: %[[MM:.*]] = fxmlir.aten.mm %arg1, %arg2
// CHECK: fxmlir.bias_add %[[MM]], %arg0 {axis = 1 : i64}
// CHECK-NOT: fxmlir.aten.addmm
func.func @addmm(%b: !b, %x: !x, %w: !w) -> !y {
  %0 = fxmlir.aten.addmm %b, %x, %w {alpha = 1 : i64, beta = 1 : i64} : (!b, !x, !w) -> !y
  return %0 : !y
}


// beta != 1 scales the bias: not a bias_add.
// CHECK-LABEL: func.func @addmm_scaled
// CHECK: fxmlir.aten.addmm
// CHECK-NOT: fxmlir.bias_add
func.func @addmm_scaled(%b: tensor<64xf32>, %x: tensor<8x32xf32>, %w: tensor<32x64xf32>) -> tensor<8x64xf32> {
  %0 = fxmlir.aten.addmm %b, %x, %w {alpha = 1 : i64, beta = 2.0 : f64} : (tensor<64xf32>, tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}


// A full-matrix addend is not a bias.
// CHECK-LABEL: func.func @addmm_matrix
// CHECK: fxmlir.aten.addmm
func.func @addmm_matrix(%b: tensor<8x64xf32>, %x: tensor<8x32xf32>, %w: tensor<32x64xf32>) -> tensor<8x64xf32> {
  %0 = fxmlir.aten.addmm %b, %x, %w {alpha = 1 : i64, beta = 1 : i64} : (tensor<8x64xf32>, tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}


// CHECK-LABEL: func.func @broadcast_add
// CHECK: fxmlir.bias_add %arg0, %arg1 {axis = 2 : i64}
// CHECK: fxmlir.bias_add %arg0, %arg1 {axis = 2 : i64}
func.func @broadcast_add(%x: tensor<2x?x16xbf16>, %b: tensor<16xbf16>) -> (tensor<2x?x16xbf16>, tensor<2x?x16xbf16>) {
  %0 = fxmlir.aten.add.Tensor %x, %b {alpha = 1 : i64} : (tensor<2x?x16xbf16>, tensor<16xbf16>) -> tensor<2x?x16xbf16>
  %1 = fxmlir.aten.add.Tensor %b, %x {alpha = 1 : i64} : (tensor<16xbf16>, tensor<2x?x16xbf16>) -> tensor<2x?x16xbf16>
  return %0, %1 : tensor<2x?x16xbf16>, tensor<2x?x16xbf16>
}


// Same-shape adds, scaled adds and a size-1 addend (not one bias per
// column) stay adds.
// CHECK-LABEL: func.func @plain_add
// CHECK-NOT: fxmlir.bias_add
// CHECK: return
func.func @plain_add(%x: tensor<4x16xf32>, %y: tensor<4x16xf32>, %b: tensor<16xf32>, %s: tensor<1xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %0 = fxmlir.aten.add.Tensor %x, %y {alpha = 1 : i64} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = fxmlir.aten.add.Tensor %x, %b {alpha = 2 : i64} : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %2 = fxmlir.aten.add.Tensor %x, %s {alpha = 1 : i64} : (tensor<4x16xf32>, tensor<1xf32>) -> tensor<4x16xf32>
  return %0, %1, %2 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>
}


// A size-1 addend of a dynamic last dim broadcasts: not a bias either.
// CHECK-LABEL: func.func @size_one_addend_of_a_dynamic_dim
// CHECK-NOT: fxmlir.bias_add
// CHECK: return
func.func @size_one_addend_of_a_dynamic_dim(%x: tensor<4x?xf32>, %s: tensor<1xf32>) -> tensor<4x?xf32> {
  %0 = fxmlir.aten.add.Tensor %x, %s {alpha = 1 : i64} : (tensor<4x?xf32>, tensor<1xf32>) -> tensor<4x?xf32>
  return %0 : tensor<4x?xf32>
}

// A dynamic bias of a dynamic last dim is a bias.
// CHECK-LABEL: func.func @dynamic_bias
// CHECK: fxmlir.bias_add %arg0, %arg1 {axis = 1 : i64}
func.func @dynamic_bias(%x: tensor<4x?xf32>, %b: tensor<?xf32>) -> tensor<4x?xf32> {
  %0 = fxmlir.aten.add.Tensor %x, %b {alpha = 1 : i64} : (tensor<4x?xf32>, tensor<?xf32>) -> tensor<4x?xf32>
  return %0 : tensor<4x?xf32>
}


// The bias_add moves below a view that restores the leading dims.
// CHECK-LABEL: func.func @sink_below_view
// CHECK: %[[MM:.*]] = fxmlir.aten.mm
// CHECK: %[[VIEW:.*]] = fxmlir.aten.view %[[MM]] {size = array<i64: 2, 4, 64>}
// CHECK: %[[SUM:.*]] = fxmlir.bias_add %[[VIEW]], %arg0 {axis = 2 : i64}
// CHECK: fxmlir.aten.gelu %[[SUM]]
func.func @sink_below_view(%b: tensor<64xf32>, %x: tensor<8x32xf32>, %w: tensor<32x64xf32>) -> tensor<2x4x64xf32> {
  %0 = fxmlir.aten.addmm %b, %x, %w {alpha = 1 : i64, beta = 1 : i64} : (tensor<64xf32>, tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
  %1 = fxmlir.aten.view %0 {size = array<i64: 2, 4, 64>} : (tensor<8x64xf32>) -> tensor<2x4x64xf32>
  %2 = fxmlir.aten.gelu %1 {approximate = "none"} : (tensor<2x4x64xf32>) -> tensor<2x4x64xf32>
  return %2 : tensor<2x4x64xf32>
}


// A view that reshapes the bias dim keeps the bias_add above it.
// CHECK-LABEL: func.func @view_changes_bias_dim
// CHECK: fxmlir.bias_add
// CHECK-NEXT: fxmlir.aten.view
func.func @view_changes_bias_dim(%b: tensor<64xf32>, %x: tensor<8x32xf32>, %w: tensor<32x64xf32>) -> tensor<8x8x8xf32> {
  %0 = fxmlir.aten.addmm %b, %x, %w {alpha = 1 : i64, beta = 1 : i64} : (tensor<64xf32>, tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
  %1 = fxmlir.aten.view %0 {size = array<i64: 8, 8, 8>} : (tensor<8x64xf32>) -> tensor<8x8x8xf32>
  return %1 : tensor<8x8x8xf32>
}
