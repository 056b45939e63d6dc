// RUN: fxmlir-opt %s --fxmlir-fold-transpose-pairs | FileCheck %s

// A weight's gradient returned as t(t(mm)), as AOTAutograd's backward does:
// the product itself.
// CHECK-LABEL: func.func @returned_gradient
// CHECK: %[[MM:.*]] = fxmlir.aten.mm
// CHECK-NOT: fxmlir.aten.t
// CHECK: return %[[MM]]
func.func @returned_gradient(%g: tensor<8x64xf32>, %x: tensor<8x32xf32>) -> tensor<64x32xf32> {
  %0 = fxmlir.aten.t %g : (tensor<8x64xf32>) -> tensor<64x8xf32>
  %1 = fxmlir.aten.mm %0, %x : (tensor<64x8xf32>, tensor<8x32xf32>) -> tensor<64x32xf32>
  %2 = fxmlir.aten.t %1 : (tensor<64x32xf32>) -> tensor<32x64xf32>
  %3 = fxmlir.aten.t %2 : (tensor<32x64xf32>) -> tensor<64x32xf32>
  return %3 : tensor<64x32xf32>
}

// A weight saved as t(t(w)) while t(w) feeds the forward's product: the
// saved value is w, the single transpose stays.
// CHECK-LABEL: func.func @saved_weight
// CHECK: %[[T:.*]] = fxmlir.aten.t %arg1
// CHECK: %[[MM:.*]] = fxmlir.aten.mm %arg0, %[[T]]
// CHECK-NOT: fxmlir.aten.t
// CHECK: return %[[MM]], %arg1
func.func @saved_weight(%x: tensor<8x32xf32>, %w: tensor<64x32xf32>) -> (tensor<8x64xf32>, tensor<64x32xf32>) {
  %0 = fxmlir.aten.t %w : (tensor<64x32xf32>) -> tensor<32x64xf32>
  %1 = fxmlir.aten.mm %x, %0 : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
  %2 = fxmlir.aten.t %0 : (tensor<32x64xf32>) -> tensor<64x32xf32>
  return %1, %2 : tensor<8x64xf32>, tensor<64x32xf32>
}

// Dynamic rows: the pair's type is its input's, so it folds.
// CHECK-LABEL: func.func @dynamic
// CHECK-NOT: fxmlir.aten.t
// CHECK: return %arg0
func.func @dynamic(%x: tensor<?x32xf32>) -> tensor<?x32xf32> {
  %0 = fxmlir.aten.t %x : (tensor<?x32xf32>) -> tensor<32x?xf32>
  %1 = fxmlir.aten.t %0 : (tensor<32x?xf32>) -> tensor<?x32xf32>
  return %1 : tensor<?x32xf32>
}

// Negative: one transpose, and a transpose of another op, stay.
// CHECK-LABEL: func.func @single
// CHECK: %[[T:.*]] = fxmlir.aten.t %arg0
// CHECK: %[[TT:.*]] = fxmlir.aten.t %[[NEG:.*]] :
// CHECK: return %[[T]], %[[TT]]
func.func @single(%x: tensor<8x32xf32>) -> (tensor<32x8xf32>, tensor<8x32xf32>) {
  %0 = fxmlir.aten.t %x : (tensor<8x32xf32>) -> tensor<32x8xf32>
  %1 = fxmlir.aten.neg %0 : (tensor<32x8xf32>) -> tensor<32x8xf32>
  %2 = fxmlir.aten.t %1 : (tensor<32x8xf32>) -> tensor<8x32xf32>
  return %0, %2 : tensor<32x8xf32>, tensor<8x32xf32>
}
