// Each verifier rejects bad input with a diagnostic naming the problem.
// RUN: fxmlir-opt %s -split-input-file -verify-diagnostics

func.func @bias_not_1d(%x: tensor<8x16xf32>, %b: tensor<1x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{needs a 1-D bias, got rank 2}}
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (tensor<8x16xf32>, tensor<1x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @axis_out_of_range(%x: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{axis 2 is out of range for an input of rank 2}}
  %0 = fxmlir.bias_add %x, %b {axis = 2 : i64} : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @bias_size_mismatch(%x: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{bias of size 16 does not match dim 0 of size 8}}
  %0 = fxmlir.bias_add %x, %b {axis = 0 : i64} : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @element_type_mismatch(%x: tensor<8x16xf32>, %b: tensor<16xf16>) -> tensor<8x16xf32> {
  // expected-error @+1 {{input element type 'f32' differs from bias element type 'f16'}}
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (tensor<8x16xf32>, tensor<16xf16>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @device_mismatch(%x: tensor<16xf32, #fxmlir.device<"cpu">>,
                           %b: tensor<16xf32, #fxmlir.device<"cuda:0">>)
    -> tensor<16xf32, #fxmlir.device<"cpu">> {
  // expected-error @+1 {{input and bias are on different devices}}
  %0 = fxmlir.bias_add %x, %b {axis = 0 : i64}
      : (tensor<16xf32, #fxmlir.device<"cpu">>, tensor<16xf32, #fxmlir.device<"cuda:0">>)
      -> tensor<16xf32, #fxmlir.device<"cpu">>
  return %0 : tensor<16xf32, #fxmlir.device<"cpu">>
}

// -----

func.func @result_mismatch(%x: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{result type 'tensor<8x8xf32>' does not match input type 'tensor<8x16xf32>'}}
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

func.func @bad_approximate(%x: tensor<8x16xf32>, %w: tensor<32x16xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{approximate must be "none" or "tanh", got "fast"}}
  %y, %pre = fxmlir.fused_linear_gelu %x, %w, %b {approximate = "fast"} : (tensor<8x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> (tensor<8x32xf32>, tensor<8x32xf32>)
  return %y : tensor<8x32xf32>
}

// -----

func.func @bad_activation(%x: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{activation must be "none", "gelu", "gelu_tanh"}}
  %0 = fxmlir.fused_bias_act %x, %b {activation = "fast", axis = 1 : i64} : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @bad_dropout_activation(%x: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {
  %none = fxmlir.none
  // expected-error @+1 {{activation must be "none", "gelu", "gelu_tanh"}}
  %y, %m = fxmlir.fused_bias_dropout_add %x, %b, %none {activation = "gelu_erf", axis = 1 : i64, p = 1.000000e-01 : f64, packed = true} : (tensor<8x16xf32>, tensor<16xf32>, none) -> (tensor<8x16xf32>, tensor<16xui8>)
  return %y : tensor<8x16xf32>
}

// -----

func.func @grad_shape(%g: tensor<4x16xf32>, %x: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{grad type 'tensor<4x16xf32>' is not shaped like 'tensor<8x16xf32>'}}
  %0 = fxmlir.fused_bias_act_grad %g, %x, %b {activation = "gelu", axis = 1 : i64} : (tensor<4x16xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @mask_not_bool(%x: tensor<8x16xf32>, %b: tensor<16xf32>, %m: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{mask must have element type i1, got 'f32'}}
  %0 = fxmlir.fused_bias_add_mask_scale %x, %b, %m {axis = 1 : i64, scale = 2.0 : f64} : (tensor<8x16xf32>, tensor<16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @mask_shape(%x: tensor<8x16xf32>, %b: tensor<16xf32>, %m: tensor<16xi1>) -> tensor<8x16xf32> {
  // expected-error @+1 {{mask type 'tensor<16xi1>' is not shaped like 'tensor<8x16xf32>'}}
  %0 = fxmlir.fused_bias_add_mask_scale %x, %b, %m {axis = 1 : i64, scale = 2.0 : f64} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xi1>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @p_out_of_range(%x: tensor<8xf32>) -> tensor<8xi1> {
  // expected-error @+1 {{p must be in [0, 1), got 1}}
  %0 = fxmlir.random_mask_like %x {p = 1.0 : f64} : (tensor<8xf32>) -> tensor<8xi1>
  return %0 : tensor<8xi1>
}

// -----

func.func @mask_result_type(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{result must have element type i1, got 'f32'}}
  %0 = fxmlir.random_mask_like %x {p = 0.5 : f64} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @call_bad_operand_ref(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{refers to operand 3 but has 1 operands}}
  %0 = fxmlir.call "mylib::op"(%x) {args = [#fxmlir.operand<3>], kwargs = {}} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @call_empty_target(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{needs a non-empty target name}}
  %0 = fxmlir.call ""(%x) {args = [#fxmlir.operand<0>], kwargs = {}} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @jit_missing_callee(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{callee @nowhere is not a func.func}}
  %0 = fxmlir.mlir_jit @nowhere(%x) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func private @region(%x: tensor<8xf32>) -> tensor<8xf32>

func.func @jit_type_mismatch(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand and result types do not match callee @region}}
  %0 = fxmlir.mlir_jit @region(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{unknown device type 'tpu' in 'tpu:0'}}
func.func @bad_device(%x: tensor<8xf32, #fxmlir.device<"tpu:0">>) {
  return
}

// -----

func.func @float_target(%x: tensor<8x16xf32>, %w: tensor<32x16xf32>, %t: tensor<8xf32>) -> tensor<f32> {
  %none = fxmlir.none
  // expected-error @+1 {{target element type 'f32' is not an integer}}
  %loss, %lse, %z = fxmlir.fused_linear_cross_entropy %x, %w, %none, %t {ignore_index = -100 : i64, reduction = 1 : i64, return_logits = false} : (tensor<8x16xf32>, tensor<32x16xf32>, none, tensor<8xf32>) -> (tensor<f32>, tensor<8xf32>, tensor<0xf32>)
  return %loss : tensor<f32>
}

// -----

func.func @logits_not_rows_by_classes(%x: tensor<2x4x16xf32>, %w: tensor<32x16xf32>, %t: tensor<8xsi64>) -> tensor<f32> {
  %none = fxmlir.none
  // expected-error @+1 {{logits 'tensor<8x32xf32>' is not [..., N] for x 'tensor<2x4x16xf32>' ([..., K], M rows) and weight 'tensor<32x16xf32>' ([N, K])}}
  %loss, %lse, %z = fxmlir.fused_linear_cross_entropy %x, %w, %none, %t {ignore_index = -100 : i64, reduction = 1 : i64, return_logits = true} : (tensor<2x4x16xf32>, tensor<32x16xf32>, none, tensor<8xsi64>) -> (tensor<f32>, tensor<8xf32>, tensor<8x32xf32>)
  return %loss : tensor<f32>
}

// -----

func.func @cast_result_of_another_dtype(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{result 1 must be 'tensor<4xbf16>', got 'tensor<4xf16>'}}
  %0:2 = fxmlir.cast_tensors %a, %b {dtype = bf16} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xbf16>, tensor<4xf16>)
  return %0#1 : tensor<4xf16>
}

// -----

func.func @cast_result_of_another_shape(%a: tensor<4xf32>) -> tensor<2x2xbf16> {
  // expected-error @+1 {{result 0 must be 'tensor<4xbf16>', got 'tensor<2x2xbf16>'}}
  %0 = fxmlir.cast_tensors %a {dtype = bf16} : (tensor<4xf32>) -> tensor<2x2xbf16>
  return %0 : tensor<2x2xbf16>
}

// -----

func.func @cast_results_missing(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xbf16> {
  // expected-error @+1 {{has 1 results for 2 tensors}}
  %0 = fxmlir.cast_tensors %a, %b {dtype = bf16} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

func.func @embedding_grad_of_integers(%g: tensor<2x8xsi64>, %i: tensor<2xsi64>) -> tensor<10x8xsi64> {
  // expected-error @+1 {{needs a floating-point grad [..., D], got 'tensor<2x8xsi64>'}}
  %0 = fxmlir.embedding_grad %g, %i {num_weights = 10 : i64, padding_idx = -1 : i64} : (tensor<2x8xsi64>, tensor<2xsi64>) -> tensor<10x8xsi64>
  return %0 : tensor<10x8xsi64>
}

// -----

func.func @embedding_grad_float_indices(%g: tensor<2x8xf32>, %i: tensor<2xf32>) -> tensor<10x8xf32> {
  // expected-error @+1 {{needs integer indices, got 'tensor<2xf32>'}}
  %0 = fxmlir.embedding_grad %g, %i {num_weights = 10 : i64, padding_idx = -1 : i64} : (tensor<2x8xf32>, tensor<2xf32>) -> tensor<10x8xf32>
  return %0 : tensor<10x8xf32>
}

// -----

func.func @embedding_grad_indices_not_leading_dims(%g: tensor<2x8xf32>, %i: tensor<3xsi64>) -> tensor<10x8xf32> {
  // expected-error @+1 {{indices 'tensor<3xsi64>' do not have grad's leading dims}}
  %0 = fxmlir.embedding_grad %g, %i {num_weights = 10 : i64, padding_idx = -1 : i64} : (tensor<2x8xf32>, tensor<3xsi64>) -> tensor<10x8xf32>
  return %0 : tensor<10x8xf32>
}

// -----

func.func @embedding_grad_wrong_rows(%g: tensor<2x8xf32>, %i: tensor<2xsi64>) -> tensor<9x8xf32> {
  // expected-error @+1 {{result 'tensor<9x8xf32>' must be [num_weights = 10, D] of grad's element type}}
  %0 = fxmlir.embedding_grad %g, %i {num_weights = 10 : i64, padding_idx = -1 : i64} : (tensor<2x8xf32>, tensor<2xsi64>) -> tensor<9x8xf32>
  return %0 : tensor<9x8xf32>
}

// -----

func.func @embedding_grad_devices(%g: tensor<2x8xf32, #fxmlir.device<"cpu">>, %i: tensor<2xsi64, #fxmlir.device<"cuda:0">>) -> tensor<10x8xf32, #fxmlir.device<"cpu">> {
  // expected-error @+1 {{tensors are on different devices}}
  %0 = fxmlir.embedding_grad %g, %i {num_weights = 10 : i64, padding_idx = -1 : i64} : (tensor<2x8xf32, #fxmlir.device<"cpu">>, tensor<2xsi64, #fxmlir.device<"cuda:0">>) -> tensor<10x8xf32, #fxmlir.device<"cpu">>
  return %0 : tensor<10x8xf32, #fxmlir.device<"cpu">>
}
