// RUN: fxmlir-opt %s --fxmlir-convert-to-linalg --split-input-file --verify-diagnostics

func.func private @gemm(%a: tensor<4x4xf32, #fxmlir.device<"cpu">>) -> tensor<4x4xf32, #fxmlir.device<"cpu">> {
  // expected-error @below {{is not supported by the JIT lowering}}
  %0 = fxmlir.aten.mm %a, %a : (tensor<4x4xf32, #fxmlir.device<"cpu">>, tensor<4x4xf32, #fxmlir.device<"cpu">>) -> tensor<4x4xf32, #fxmlir.device<"cpu">>
  return %0 : tensor<4x4xf32, #fxmlir.device<"cpu">>
}

// -----

// Softmax over a dim other than the last has no row-reduction lowering.
func.func private @softmax_dim0(%x: tensor<4x16xf32, #fxmlir.device<"cpu">>) -> tensor<4x16xf32, #fxmlir.device<"cpu">> {
  // expected-error @below {{is not supported by the JIT lowering}}
  %0 = fxmlir.aten._softmax %x {dim = 0 : i64, half_to_float = false} : (tensor<4x16xf32, #fxmlir.device<"cpu">>) -> tensor<4x16xf32, #fxmlir.device<"cpu">>
  return %0 : tensor<4x16xf32, #fxmlir.device<"cpu">>
}

// -----

// Tensors need a CPU or CUDA device.
func.func private @no_device(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{is not supported by the JIT lowering}}
  %0 = fxmlir.aten.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A view that regroups dims (4x2 -> 8) is not a unit-dim view, even with a
// dynamic dim.
func.func private @regrouping_view(%x: tensor<?x2xf32, #fxmlir.device<"cpu">>) -> tensor<8xf32, #fxmlir.device<"cpu">> {
  // expected-error @below {{is not supported by the JIT lowering}}
  %0 = fxmlir.aten.view %x {size = array<i64: 8>} : (tensor<?x2xf32, #fxmlir.device<"cpu">>) -> tensor<8xf32, #fxmlir.device<"cpu">>
  return %0 : tensor<8xf32, #fxmlir.device<"cpu">>
}

// -----

// Slices, concatenation and transposes never move elements across dim 0,
// along which the runtime splits a region's rows.
func.func private @slice_dim0(%x: tensor<4x16xf32, #fxmlir.device<"cpu">>) -> tensor<2x16xf32, #fxmlir.device<"cpu">> {
  // expected-error @below {{is not supported by the JIT lowering}}
  %0 = fxmlir.aten.slice.Tensor %x {dim = 0 : i64, start = 0 : i64, end = 2 : i64, step = 1 : i64} : (tensor<4x16xf32, #fxmlir.device<"cpu">>) -> tensor<2x16xf32, #fxmlir.device<"cpu">>
  return %0 : tensor<2x16xf32, #fxmlir.device<"cpu">>
}

// -----

func.func private @cat_dim0(%x: tensor<4x16xf32, #fxmlir.device<"cpu">>) -> tensor<8x16xf32, #fxmlir.device<"cpu">> {
  // expected-error @below {{is not supported by the JIT lowering}}
  %0 = fxmlir.aten.cat [%x, %x] {dim = -2 : i64} : (tensor<4x16xf32, #fxmlir.device<"cpu">>, tensor<4x16xf32, #fxmlir.device<"cpu">>) -> tensor<8x16xf32, #fxmlir.device<"cpu">>
  return %0 : tensor<8x16xf32, #fxmlir.device<"cpu">>
}

// -----

func.func private @transpose_dim0(%x: tensor<4x16xf32, #fxmlir.device<"cpu">>) -> tensor<16x4xf32, #fxmlir.device<"cpu">> {
  // expected-error @below {{is not supported by the JIT lowering}}
  %0 = fxmlir.aten.transpose.int %x {dim0 = 0 : i64, dim1 = 1 : i64} : (tensor<4x16xf32, #fxmlir.device<"cpu">>) -> tensor<16x4xf32, #fxmlir.device<"cpu">>
  return %0 : tensor<16x4xf32, #fxmlir.device<"cpu">>
}

// -----

// A clone to channels-last has a layout a region does not write.
func.func private @clone_channels_last(%x: tensor<2x3x4x5xf32, #fxmlir.device<"cpu">>) -> tensor<2x3x4x5xf32, #fxmlir.device<"cpu">> {
  // expected-error @below {{is not supported by the JIT lowering}}
  %0 = fxmlir.aten.clone %x {memory_format = "channels_last"} : (tensor<2x3x4x5xf32, #fxmlir.device<"cpu">>) -> tensor<2x3x4x5xf32, #fxmlir.device<"cpu">>
  return %0 : tensor<2x3x4x5xf32, #fxmlir.device<"cpu">>
}

// -----

// Class weights have no lowering.
func.func private @nll_loss_backward_weights(%g: tensor<f32, #fxmlir.device<"cpu">>, %x: tensor<6x10xf32, #fxmlir.device<"cpu">>, %t: tensor<6xsi64, #fxmlir.device<"cpu">>, %c: tensor<10xf32, #fxmlir.device<"cpu">>, %w: tensor<f32, #fxmlir.device<"cpu">>) -> tensor<6x10xf32, #fxmlir.device<"cpu">> {
  // expected-error @below {{is not supported by the JIT lowering}}
  %0 = fxmlir.aten.nll_loss_backward %g, %x, %t, %c, %w {reduction = 1 : i64, ignore_index = -100 : i64} : (tensor<f32, #fxmlir.device<"cpu">>, tensor<6x10xf32, #fxmlir.device<"cpu">>, tensor<6xsi64, #fxmlir.device<"cpu">>, tensor<10xf32, #fxmlir.device<"cpu">>, tensor<f32, #fxmlir.device<"cpu">>) -> tensor<6x10xf32, #fxmlir.device<"cpu">>
  return %0 : tensor<6x10xf32, #fxmlir.device<"cpu">>
}

// -----

// Only the whole of a dynamic dim is placed: other slices of it need the
// dim's size, which a JIT function does not know ahead.
func.func private @slice_backward_of_part_of_a_dynamic_dim(%g: tensor<2x?xf32, #fxmlir.device<"cpu">>) -> tensor<2x?xf32, #fxmlir.device<"cpu">> {
  // expected-error @below {{is not supported by the JIT lowering}}
  %0 = "fxmlir.call"(%g) {target = "aten::slice_backward.default", args = [#fxmlir.operand<0>, [2, -9223372036854775808], 1, 1, 9223372036854775807, 1], kwargs = {}} : (tensor<2x?xf32, #fxmlir.device<"cpu">>) -> tensor<2x?xf32, #fxmlir.device<"cpu">>
  return %0 : tensor<2x?xf32, #fxmlir.device<"cpu">>
}
