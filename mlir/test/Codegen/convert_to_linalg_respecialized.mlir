// RUN: fxmlir-opt %s --fxmlir-convert-to-linalg | FileCheck %s

// A region's function is compiled with a dynamic batch dim while the types
// recorded inside keep the traced sizes: ViT's logits viewed as [-1, 2]
// (a no-op view of a [2, 2] tensor) are the operand itself.
// CHECK-LABEL: func.func private @respecialized_view
// CHECK-SAME: (%[[X:.*]]: tensor<?x2xbf16>)
// CHECK-NOT: tensor.collapse_shape
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<?x2xbf16>)
func.func private @respecialized_view(%x: tensor<?x2xbf16, #fxmlir.device<"cpu">>) -> tensor<2x2xf32, #fxmlir.device<"cpu">> {
  %0 = fxmlir.aten.view %x {size = array<i64: -1, 2>} : (tensor<?x2xbf16, #fxmlir.device<"cpu">>) -> tensor<2x2xbf16, #fxmlir.device<"cpu">>
  %1 = fxmlir.aten._to_copy %0 {dtype = f32, non_blocking = false} : (tensor<2x2xbf16, #fxmlir.device<"cpu">>) -> tensor<2x2xf32, #fxmlir.device<"cpu">>
  return %1 : tensor<2x2xf32, #fxmlir.device<"cpu">>
}
