// The generated ops check their operands and attributes against the types
// their schema gives them.
// RUN: fxmlir-opt %s -split-input-file -verify-diagnostics

func.func @scalar_for_tensor(%x: tensor<8x16xf32>, %i: i64) -> tensor<8x16xf32> {
  // expected-error @+1 {{operand #1 must be ranked tensor of any type values, but got 'i64'}}
  %0 = fxmlir.aten.mul.Tensor %x, %i : (tensor<8x16xf32>, i64) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @none_for_tensor(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %none = fxmlir.none
  // expected-error @+1 {{operand #1 must be ranked tensor of any type values, but got 'none'}}
  %0 = fxmlir.aten.mul.Tensor %x, %none : (tensor<8x16xf32>, none) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @none_in_tensor_list(%x: tensor<8x16xf32>) -> tensor<16x16xf32> {
  %none = fxmlir.none
  // expected-error @+1 {{operand #1 must be variadic of ranked tensor of any type values, but got 'none'}}
  %0 = fxmlir.aten.cat [%x, %none] {dim = 0 : i64} : (tensor<8x16xf32>, none) -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}

// -----

func.func @scalar_for_optional_tensor(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: f64)
    -> tensor<2x4x6x6xf32> {
  // expected-error @+1 {{operand #2 must be tensor or none, but got 'f64'}}
  %0 = fxmlir.aten.convolution %x, %w, %b {dilation = array<i64: 1, 1>, groups = 1 : i64,
        output_padding = array<i64: 0, 0>, padding = array<i64: 0, 0>,
        stride = array<i64: 1, 1>, transposed = false}
      : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, f64) -> tensor<2x4x6x6xf32>
  return %0 : tensor<2x4x6x6xf32>
}

// -----

func.func @missing_attribute(%x: tensor<8x16xf32>) -> tensor<16x16xf32> {
  // expected-error @+1 {{requires attribute 'dim'}}
  %0 = fxmlir.aten.cat [%x, %x] : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}

// -----

func.func @int_for_int_list(%x: tensor<8x16xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{attribute 'dim' failed to satisfy constraint: i64 dense array attribute}}
  %0 = fxmlir.aten.sum.dim_IntList %x {dim = 1 : i64, keepdim = false} : (tensor<8x16xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @string_for_dtype(%x: tensor<8x16xf32>) -> tensor<8xf64> {
  // expected-error @+1 {{attribute 'dtype' failed to satisfy constraint: dtype}}
  %0 = fxmlir.aten.sum.dim_IntList %x {dim = array<i64: 1>, dtype = "f64", keepdim = false}
      : (tensor<8x16xf32>) -> tensor<8xf64>
  return %0 : tensor<8xf64>
}

// -----

func.func @string_for_scalar(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{attribute 'other' failed to satisfy constraint}}
  %0 = fxmlir.aten.mul.Scalar %x {other = "2"} : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @tensor_for_number_result(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{result #0 must be int, float or bool, but got}}
  %0 = fxmlir.aten.sym_size.int %x {dim = 0 : i64} : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
