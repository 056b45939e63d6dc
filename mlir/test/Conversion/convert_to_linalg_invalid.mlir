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
