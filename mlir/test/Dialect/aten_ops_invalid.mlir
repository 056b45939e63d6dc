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

// -----

// Shapes: pointwise ops (torch's `pointwise` tag) have the broadcast shape.
func.func @add_wrong_result_shape(%a: tensor<2x4xf32>, %b: tensor<4xf32>) -> tensor<7x9xf32> {
  // expected-error @+1 {{result type 'tensor<7x9xf32>' does not have the broadcast shape 'tensor<2x4xf32>' of the operands}}
  %0 = fxmlir.aten.add.Tensor %a, %b {alpha = 1 : i64} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<7x9xf32>
  return %0 : tensor<7x9xf32>
}

// -----

func.func @operands_that_do_not_broadcast(%a: tensor<2x4xf32>, %b: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{operand shapes do not broadcast: size 3 meets size 4 in dim 1}}
  %0 = fxmlir.aten.mul.Tensor %a, %b : (tensor<2x4xf32>, tensor<3xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @gelu_changes_shape(%x: tensor<8x16xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{does not have the broadcast shape 'tensor<8x16xf32>'}}
  %0 = fxmlir.aten.gelu %x {approximate = "none"} : (tensor<8x16xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// Attributes: torch's enums.
func.func @gelu_bogus_approximate(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{attribute 'approximate' failed to satisfy constraint: string attribute whose value is one of "none", "tanh"}}
  %0 = fxmlir.aten.gelu %x {approximate = "bogus"} : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @clone_bogus_memory_format(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{attribute 'memory_format' failed to satisfy constraint: string attribute whose value is one of "contiguous_format"}}
  %0 = fxmlir.aten.clone %x {memory_format = "diagonal"} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Element types: ops torch implements for floating point only.
func.func @integer_gelu(%x: tensor<8x16xi32>) -> tensor<8x16xi32> {
  // expected-error @+1 {{operand #0 must be a floating-point tensor, got 'tensor<8x16xi32>'}}
  %0 = fxmlir.aten.gelu %x {approximate = "none"} : (tensor<8x16xi32>) -> tensor<8x16xi32>
  return %0 : tensor<8x16xi32>
}

// -----

// Matrix products.
func.func @addmm_inner_dims(%b: tensor<4xf32>, %x: tensor<2x3xf32>, %w: tensor<5x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{inner dimensions differ: 3 and 5}}
  %0 = fxmlir.aten.addmm %b, %x, %w {alpha = 1 : i64, beta = 1 : i64} : (tensor<4xf32>, tensor<2x3xf32>, tensor<5x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @addmm_bias_of_other_width(%b: tensor<32xf32>, %x: tensor<8x16xf32>, %w: tensor<16x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{self and product dimensions differ: 32 and 64}}
  %0 = fxmlir.aten.addmm %b, %x, %w {alpha = 1 : i64, beta = 1 : i64} : (tensor<32xf32>, tensor<8x16xf32>, tensor<16x64xf32>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

func.func @mm_result_shape(%x: tensor<8x16xf32>, %w: tensor<16x64xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{result type 'tensor<8x16xf32>' does not have the expected shape 'tensor<8x64xf32>'}}
  %0 = fxmlir.aten.mm %x, %w : (tensor<8x16xf32>, tensor<16x64xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @mm_mixed_dtypes(%x: tensor<8x16xf32>, %w: tensor<16x64xbf16>) -> tensor<8x64xf32> {
  // expected-error @+1 {{matrix operands have different element types}}
  %0 = fxmlir.aten.mm %x, %w : (tensor<8x16xf32>, tensor<16x64xbf16>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

func.func @bmm_batches(%a: tensor<2x8x16xf32>, %b: tensor<3x16x4xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{batch sizes differ: 2 and 3}}
  %0 = fxmlir.aten.bmm %a, %b : (tensor<2x8x16xf32>, tensor<3x16x4xf32>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @linear_features(%x: tensor<8x16xf32>, %w: tensor<32x15xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{input features and weight columns differ: 16 and 15}}
  %0 = fxmlir.aten.linear %x, %w, %b : (tensor<8x16xf32>, tensor<32x15xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// Views.
func.func @view_changes_numel(%x: tensor<8x16xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{cannot view 128 elements as 16 elements}}
  %0 = fxmlir.aten.view %x {size = array<i64: 4, 4>} : (tensor<8x16xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @view_negative_size(%x: tensor<8x16xf32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{size has a negative dimension}}
  %0 = fxmlir.aten.view %x {size = array<i64: -2, 16>} : (tensor<8x16xf32>) -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

// A symbolic entry stands for the result's size in its dim alone: the
// static entries must still be the result's.
func.func @symbolic_view_size_with_a_static_result(%x: tensor<?x16xf32>) -> tensor<?x4x4xf32> {
  // expected-error @+1 {{does not have the expected shape 'tensor<?x8x4xf32>'}}
  %0 = fxmlir.aten.view %x {size = array<i64: -9223372036854775808, 8, 4>} : (tensor<?x16xf32>) -> tensor<?x4x4xf32>
  return %0 : tensor<?x4x4xf32>
}

// -----

func.func @view_two_inferred_dims(%x: tensor<8x16xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{size may infer only one dimension (-1)}}
  %0 = fxmlir.aten.view %x {size = array<i64: -1, -1>} : (tensor<8x16xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @transpose_result(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{does not have the expected shape 'tensor<4x3x2xf32>'}}
  %0 = fxmlir.aten.transpose.int %x {dim0 = 0 : i64, dim1 = -1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

func.func @permute_not_a_permutation(%x: tensor<2x3x4xf32>) -> tensor<2x2x4xf32> {
  // expected-error @+1 {{dims is not a permutation of the tensor's dims}}
  %0 = fxmlir.aten.permute %x {dims = array<i64: 0, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<2x2x4xf32>
  return %0 : tensor<2x2x4xf32>
}

// -----

func.func @expand_non_singleton(%x: tensor<3x1xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{expanded non-singleton sizes differ: 3 and 4}}
  %0 = fxmlir.aten.expand %x {implicit = false, size = array<i64: 4, 5>} : (tensor<3x1xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @unsqueeze_out_of_range(%x: tensor<3xf32>) -> tensor<3x1xf32> {
  // expected-error @+1 {{dim 5 is out of range for rank 2}}
  %0 = fxmlir.aten.unsqueeze %x {dim = 5 : i64} : (tensor<3xf32>) -> tensor<3x1xf32>
  return %0 : tensor<3x1xf32>
}
