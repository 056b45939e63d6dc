// RUN: fxmlir-opt %s --fxmlir-recognize-gelu --canonicalize | FileCheck %s

!t = tensor<4x16xf32, #fxmlir.device<"cpu">>
!h = tensor<4x16xbf16, #fxmlir.device<"cpu">>

// GPT-2's gelu_new: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * pow(x, 3)))).
// CHECK-LABEL: func.func @gelu_new
// CHECK-NEXT: %[[G:.*]] = fxmlir.aten.gelu %arg0 {approximate = "tanh"}
// CHECK-NEXT: return %[[G]]
func.func @gelu_new(%x: !t) -> !t {
  %0 = fxmlir.aten.mul.Scalar %x {other = 5.000000e-01 : f64} : (!t) -> !t
  %1 = fxmlir.aten.pow.Tensor_Scalar %x {exponent = 3.000000e+00 : f64} : (!t) -> !t
  %2 = fxmlir.aten.mul.Scalar %1 {other = 4.471500e-02 : f64} : (!t) -> !t
  %3 = fxmlir.aten.add.Tensor %x, %2 {alpha = 1 : i64} : (!t, !t) -> !t
  %4 = fxmlir.aten.mul.Scalar %3 {other = 0.79788456080286541 : f64} : (!t) -> !t
  %5 = fxmlir.aten.tanh %4 : (!t) -> !t
  %6 = fxmlir.aten.add.Scalar %5 {other = 1.000000e+00 : f64, alpha = 1 : i64} : (!t) -> !t
  %7 = fxmlir.aten.mul.Tensor %0, %6 : (!t, !t) -> !t
  return %7 : !t
}

// Megatron's bias_gelu: x * 0.5 * (1 + tanh(0.79788456 * x * (1 + 0.044715 * x * x))),
// the factor first in the last product.
// CHECK-LABEL: func.func @fast_gelu
// CHECK-NEXT: %[[G:.*]] = fxmlir.aten.gelu %arg0 {approximate = "tanh"}
// CHECK-NEXT: return %[[G]]
func.func @fast_gelu(%x: !t) -> !t {
  %0 = fxmlir.aten.mul.Scalar %x {other = 5.000000e-01 : f64} : (!t) -> !t
  %1 = fxmlir.aten.mul.Scalar %x {other = 0.79788456 : f64} : (!t) -> !t
  %2 = fxmlir.aten.mul.Scalar %x {other = 4.471500e-02 : f64} : (!t) -> !t
  %3 = fxmlir.aten.mul.Tensor %2, %x : (!t, !t) -> !t
  %4 = fxmlir.aten.add.Scalar %3 {other = 1 : i64, alpha = 1 : i64} : (!t) -> !t
  %5 = fxmlir.aten.mul.Tensor %1, %4 : (!t, !t) -> !t
  %6 = fxmlir.aten.tanh %5 : (!t) -> !t
  %7 = fxmlir.aten.add.Scalar %6 {other = 1.000000e+00 : f64, alpha = 1 : i64} : (!t) -> !t
  %8 = fxmlir.aten.mul.Tensor %7, %0 : (!t, !t) -> !t
  return %8 : !t
}

// x * x * x for the cube, and the half applied last: (x * (1 + tanh(...))) * 0.5.
// CHECK-LABEL: func.func @cube_by_products_half_last
// CHECK-NEXT: %[[G:.*]] = fxmlir.aten.gelu %arg0 {approximate = "tanh"}
// CHECK-NEXT: return %[[G]]
func.func @cube_by_products_half_last(%x: !t) -> !t {
  %0 = fxmlir.aten.mul.Tensor %x, %x : (!t, !t) -> !t
  %1 = fxmlir.aten.mul.Tensor %0, %x : (!t, !t) -> !t
  %2 = fxmlir.aten.mul.Scalar %1 {other = 0.044714998453855515 : f64} : (!t) -> !t
  %3 = fxmlir.aten.add.Tensor %2, %x {alpha = 1 : i64} : (!t, !t) -> !t
  %4 = fxmlir.aten.mul.Scalar %3 {other = 0.7978845834732056 : f64} : (!t) -> !t
  %5 = fxmlir.aten.tanh %4 : (!t) -> !t
  %6 = fxmlir.aten.add.Scalar %5 {other = 1.000000e+00 : f64, alpha = 1 : i64} : (!t) -> !t
  %7 = fxmlir.aten.mul.Tensor %x, %6 : (!t, !t) -> !t
  %8 = fxmlir.aten.mul.Scalar %7 {other = 5.000000e-01 : f64} : (!t) -> !t
  return %8 : !t
}

// The erf form: x * 0.5 * (1 + erf(x / sqrt(2))), and with x * (1 / sqrt(2)).
// CHECK-LABEL: func.func @erf_gelu
// CHECK-NEXT: %[[A:.*]] = fxmlir.aten.gelu %arg0 {approximate = "none"}
// CHECK-NEXT: %[[B:.*]] = fxmlir.aten.gelu %arg0 {approximate = "none"}
// CHECK-NEXT: return %[[A]], %[[B]]
func.func @erf_gelu(%x: !t) -> (!t, !t) {
  %0 = fxmlir.aten.mul.Scalar %x {other = 5.000000e-01 : f64} : (!t) -> !t
  %1 = fxmlir.aten.div.Scalar %x {other = 1.4142135623730951 : f64} : (!t) -> !t
  %2 = fxmlir.aten.erf %1 : (!t) -> !t
  %3 = fxmlir.aten.add.Scalar %2 {other = 1.000000e+00 : f64, alpha = 1 : i64} : (!t) -> !t
  %4 = fxmlir.aten.mul.Tensor %0, %3 : (!t, !t) -> !t
  %5 = fxmlir.aten.mul.Scalar %x {other = 0.70710678118654757 : f64} : (!t) -> !t
  %6 = fxmlir.aten.erf %5 : (!t) -> !t
  %7 = fxmlir.aten.add.Scalar %6 {other = 1 : i64, alpha = 1 : i64} : (!t) -> !t
  %8 = fxmlir.aten.mul.Tensor %7, %x : (!t, !t) -> !t
  %9 = fxmlir.aten.mul.Scalar %8 {other = 5.000000e-01 : f64} : (!t) -> !t
  return %4, %9 : !t, !t
}

// Upcast, gelu, downcast back: gelu of the bf16 value.
// CHECK-LABEL: func.func @through_casts
// CHECK-NEXT: %[[G:.*]] = fxmlir.aten.gelu %arg0 {approximate = "tanh"} : (tensor<4x16xbf16
// CHECK-NEXT: return %[[G]]
func.func @through_casts(%y: !h) -> !h {
  %0 = fxmlir.aten._to_copy %y {dtype = f32, non_blocking = false} : (!h) -> !t
  %1 = fxmlir.aten.gelu %0 {approximate = "tanh"} : (!t) -> !t
  %2 = fxmlir.aten._to_copy %1 {dtype = bf16, non_blocking = false} : (!t) -> !h
  return %2 : !h
}

// Negative cases: each formula is off in one place.
// CHECK-LABEL: func.func @not_gelu
// CHECK-NOT: fxmlir.aten.gelu
// CHECK: return
func.func @not_gelu(%x: !t, %y: !t) -> (!t, !t, !t, !t, !t) {
  // 0.4 instead of 0.5.
  %0 = fxmlir.aten.mul.Scalar %x {other = 4.000000e-01 : f64} : (!t) -> !t
  %1 = fxmlir.aten.div.Scalar %x {other = 1.4142135623730951 : f64} : (!t) -> !t
  %2 = fxmlir.aten.erf %1 : (!t) -> !t
  %3 = fxmlir.aten.add.Scalar %2 {other = 1.000000e+00 : f64, alpha = 1 : i64} : (!t) -> !t
  %4 = fxmlir.aten.mul.Tensor %0, %3 : (!t, !t) -> !t
  // The erf of another tensor.
  %5 = fxmlir.aten.mul.Scalar %x {other = 5.000000e-01 : f64} : (!t) -> !t
  %6 = fxmlir.aten.div.Scalar %y {other = 1.4142135623730951 : f64} : (!t) -> !t
  %7 = fxmlir.aten.erf %6 : (!t) -> !t
  %8 = fxmlir.aten.add.Scalar %7 {other = 1.000000e+00 : f64, alpha = 1 : i64} : (!t) -> !t
  %9 = fxmlir.aten.mul.Tensor %5, %8 : (!t, !t) -> !t
  // A wrong cube coefficient (0.045).
  %10 = fxmlir.aten.pow.Tensor_Scalar %x {exponent = 3 : i64} : (!t) -> !t
  %11 = fxmlir.aten.mul.Scalar %10 {other = 4.500000e-02 : f64} : (!t) -> !t
  %12 = fxmlir.aten.add.Tensor %x, %11 {alpha = 1 : i64} : (!t, !t) -> !t
  %13 = fxmlir.aten.mul.Scalar %12 {other = 0.79788456080286541 : f64} : (!t) -> !t
  %14 = fxmlir.aten.tanh %13 : (!t) -> !t
  %15 = fxmlir.aten.add.Scalar %14 {other = 1.000000e+00 : f64, alpha = 1 : i64} : (!t) -> !t
  %16 = fxmlir.aten.mul.Tensor %5, %15 : (!t, !t) -> !t
  // 1 - tanh instead of 1 + tanh (alpha -1 on the constant).
  %17 = fxmlir.aten.pow.Tensor_Scalar %x {exponent = 3 : i64} : (!t) -> !t
  %18 = fxmlir.aten.mul.Scalar %17 {other = 4.471500e-02 : f64} : (!t) -> !t
  %19 = fxmlir.aten.add.Tensor %x, %18 {alpha = 1 : i64} : (!t, !t) -> !t
  %20 = fxmlir.aten.mul.Scalar %19 {other = 0.79788456080286541 : f64} : (!t) -> !t
  %21 = fxmlir.aten.tanh %20 : (!t) -> !t
  %22 = fxmlir.aten.add.Scalar %21 {other = 1.000000e+00 : f64, alpha = -1 : i64} : (!t) -> !t
  %23 = fxmlir.aten.mul.Tensor %5, %22 : (!t, !t) -> !t
  // A fourth power is not a cube.
  %24 = fxmlir.aten.pow.Tensor_Scalar %x {exponent = 4 : i64} : (!t) -> !t
  %25 = fxmlir.aten.mul.Scalar %24 {other = 4.471500e-02 : f64} : (!t) -> !t
  %26 = fxmlir.aten.add.Tensor %x, %25 {alpha = 1 : i64} : (!t, !t) -> !t
  %27 = fxmlir.aten.mul.Scalar %26 {other = 0.79788456080286541 : f64} : (!t) -> !t
  %28 = fxmlir.aten.tanh %27 : (!t) -> !t
  %29 = fxmlir.aten.add.Scalar %28 {other = 1.000000e+00 : f64, alpha = 1 : i64} : (!t) -> !t
  %30 = fxmlir.aten.mul.Tensor %5, %29 : (!t, !t) -> !t
  return %4, %9, %16, %23, %30 : !t, !t, !t, !t, !t
}

// A formula computed in f32 on a bf16 input (a cast inside) is left alone,
// and so is a narrowing cast around gelu.
// CHECK-LABEL: func.func @casts_not_removed
// CHECK: fxmlir.aten.tanh
// CHECK: fxmlir.aten._to_copy %arg1 {dtype = bf16
// CHECK: fxmlir.aten.gelu
// CHECK: fxmlir.aten._to_copy
// CHECK: return
func.func @casts_not_removed(%y: !h, %x: !t) -> (!t, !t) {
  %c = fxmlir.aten._to_copy %y {dtype = f32, non_blocking = false} : (!h) -> !t
  %0 = fxmlir.aten.mul.Scalar %c {other = 5.000000e-01 : f64} : (!t) -> !t
  %1 = fxmlir.aten.pow.Tensor_Scalar %y {exponent = 3 : i64} : (!h) -> !h
  %up1 = fxmlir.aten._to_copy %1 {dtype = f32, non_blocking = false} : (!h) -> !t
  %2 = fxmlir.aten.mul.Scalar %up1 {other = 4.471500e-02 : f64} : (!t) -> !t
  %3 = fxmlir.aten.add.Tensor %c, %2 {alpha = 1 : i64} : (!t, !t) -> !t
  %4 = fxmlir.aten.mul.Scalar %3 {other = 0.79788456080286541 : f64} : (!t) -> !t
  %5 = fxmlir.aten.tanh %4 : (!t) -> !t
  %6 = fxmlir.aten.add.Scalar %5 {other = 1.000000e+00 : f64, alpha = 1 : i64} : (!t) -> !t
  %7 = fxmlir.aten.mul.Tensor %0, %6 : (!t, !t) -> !t
  %8 = fxmlir.aten._to_copy %x {dtype = bf16, non_blocking = false} : (!t) -> !h
  %9 = fxmlir.aten.gelu %8 {approximate = "tanh"} : (!h) -> !h
  %10 = fxmlir.aten._to_copy %9 {dtype = f32, non_blocking = false} : (!h) -> !t
  return %7, %10 : !t, !t
}
