// A linear layer's bias add followed by gelu, as AOTAutograd's forward graph
// spells it after decomposition: try
//   fxmlir-opt examples/bias_gelu.mlir --fxmlir-decompose --fxmlir-fuse-bias-add-activation
!x = tensor<16x64xf32, #fxmlir.device<"cpu">>
!b = tensor<64xf32, #fxmlir.device<"cpu">>
!w = tensor<64x32xf32, #fxmlir.device<"cpu">>

func.func @forward(%x: tensor<16x32xf32, #fxmlir.device<"cpu">>, %w: !w,
                   %b: !b) -> !x {
  %t = fxmlir.aten.t %w : (!w) -> tensor<32x64xf32, #fxmlir.device<"cpu">>
  %mm = fxmlir.aten.mm %x, %t
      : (tensor<16x32xf32, #fxmlir.device<"cpu">>, tensor<32x64xf32, #fxmlir.device<"cpu">>) -> !x
  %y = fxmlir.bias_add %mm, %b {axis = 1 : i64} : (!x, !b) -> !x
  %g = fxmlir.aten.gelu %y {approximate = "none"} : (!x) -> !x
  return %g : !x
}
