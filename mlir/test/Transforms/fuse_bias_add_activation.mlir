// RUN: fxmlir-opt %s --fxmlir-fuse-bias-add-activation | FileCheck %s

!x = tensor<8x64xf32, #fxmlir.device<"cpu">>
!b = tensor<64xf32, #fxmlir.device<"cpu">>

// CHECK-LABEL: func.func @fuse
// CHECK: fxmlir.fused_bias_act %arg0, %arg1 {activation = "gelu_tanh", axis = 1 : i64}
// CHECK-NOT: fxmlir.aten.gelu
func.func @fuse(%x: !x, %b: !b) -> !x {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %1 = fxmlir.aten.gelu %0 {approximate = "tanh"} : (!x) -> !x
  return %1 : !x
}


// CHECK-LABEL: func.func @fuse_grad
// CHECK: fxmlir.fused_bias_act_grad %arg2, %arg0, %arg1 {activation = "gelu", axis = 1 : i64}
// CHECK-NOT: fxmlir.aten.gelu_backward
func.func @fuse_grad(%x: tensor<8x64xbf16, #fxmlir.device<"cuda:0">>, %b: tensor<64xbf16, #fxmlir.device<"cuda:0">>,
                     %g: tensor<8x64xbf16, #fxmlir.device<"cuda:0">>) -> tensor<8x64xbf16, #fxmlir.device<"cuda:0">> {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (tensor<8x64xbf16, #fxmlir.device<"cuda:0">>, tensor<64xbf16, #fxmlir.device<"cuda:0">>) -> tensor<8x64xbf16, #fxmlir.device<"cuda:0">>
  %1 = fxmlir.aten.gelu_backward %g, %0 {approximate = "none"} : (tensor<8x64xbf16, #fxmlir.device<"cuda:0">>, tensor<8x64xbf16, #fxmlir.device<"cuda:0">>) -> tensor<8x64xbf16, #fxmlir.device<"cuda:0">>
  return %1 : tensor<8x64xbf16, #fxmlir.device<"cuda:0">>
}


// The bias_add result is needed elsewhere (e.g. saved for backward): fusing
// would compute it twice.
// CHECK-LABEL: func.func @multi_use
// CHECK: fxmlir.bias_add
// CHECK: fxmlir.aten.gelu
// CHECK-NOT: fxmlir.fused_bias_act
func.func @multi_use(%x: !x, %b: !b) -> (!x, !x) {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %1 = fxmlir.aten.gelu %0 {approximate = "none"} : (!x) -> !x
  return %1, %0 : !x, !x
}


// f64 has no fused kernel.
// CHECK-LABEL: func.func @unsupported_dtype
// CHECK-NOT: fxmlir.fused_bias_act
func.func @unsupported_dtype(%x: tensor<8x64xf64, #fxmlir.device<"cpu">>, %b: tensor<64xf64, #fxmlir.device<"cpu">>) -> tensor<8x64xf64, #fxmlir.device<"cpu">> {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (tensor<8x64xf64, #fxmlir.device<"cpu">>, tensor<64xf64, #fxmlir.device<"cpu">>) -> tensor<8x64xf64, #fxmlir.device<"cpu">>
  %1 = fxmlir.aten.gelu %0 {approximate = "none"} : (tensor<8x64xf64, #fxmlir.device<"cpu">>) -> tensor<8x64xf64, #fxmlir.device<"cpu">>
  return %1 : tensor<8x64xf64, #fxmlir.device<"cpu">>
}


// Neither has a tensor on a device without fused kernels (meta), nor one
// whose device is unknown.
// CHECK-LABEL: func.func @unsupported_device
// CHECK-NOT: fxmlir.fused_bias_act
func.func @unsupported_device(%x: tensor<8x64xf32, #fxmlir.device<"meta">>, %b: tensor<64xf32, #fxmlir.device<"meta">>,
                              %y: tensor<8x64xf32>, %c: tensor<64xf32>) -> (tensor<8x64xf32, #fxmlir.device<"meta">>, tensor<8x64xf32>) {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (tensor<8x64xf32, #fxmlir.device<"meta">>, tensor<64xf32, #fxmlir.device<"meta">>) -> tensor<8x64xf32, #fxmlir.device<"meta">>
  %1 = fxmlir.aten.gelu %0 {approximate = "none"} : (tensor<8x64xf32, #fxmlir.device<"meta">>) -> tensor<8x64xf32, #fxmlir.device<"meta">>
  %2 = fxmlir.bias_add %y, %c {axis = 1 : i64} : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  %3 = fxmlir.aten.gelu %2 {approximate = "none"} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %1, %3 : tensor<8x64xf32, #fxmlir.device<"meta">>, tensor<8x64xf32>
}


// A plain add (no bias_add) is not matched: fxmlir-decompose makes bias_adds.
// CHECK-LABEL: func.func @no_bias_add
// CHECK: fxmlir.aten.gelu
func.func @no_bias_add(%x: !x, %y: !x) -> !x {
  %0 = fxmlir.aten.add.Tensor %x, %y {alpha = 1 : i64} : (!x, !x) -> !x
  %1 = fxmlir.aten.gelu %0 {approximate = "none"} : (!x) -> !x
  return %1 : !x
}


// relu and silu fuse like gelu, forward and (silu) backward.
// CHECK-LABEL: func.func @relu_silu
// CHECK: fxmlir.fused_bias_act %arg0, %arg1 {activation = "relu", axis = 1 : i64}
// CHECK: fxmlir.fused_bias_act %arg0, %arg1 {activation = "silu", axis = 1 : i64}
// CHECK: fxmlir.fused_bias_act_grad %arg2, %arg0, %arg1 {activation = "silu", axis = 1 : i64}
// CHECK-NOT: fxmlir.aten.relu
// CHECK-NOT: fxmlir.aten.silu
func.func @relu_silu(%x: !x, %b: !b, %g: !x) -> (!x, !x, !x) {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %1 = fxmlir.aten.relu %0 : (!x) -> !x
  %2 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %3 = fxmlir.aten.silu %2 : (!x) -> !x
  %4 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %5 = fxmlir.aten.silu_backward %g, %4 : (!x, !x) -> !x
  return %1, %3, %5 : !x, !x, !x
}


// tanh: its backward reads the output, which the fused op returns, so only
// the forward is a pattern; a tanh of a plain add is not matched.
// CHECK-LABEL: func.func @tanh
// CHECK: %[[T:.*]] = fxmlir.fused_bias_act %arg0, %arg1 {activation = "tanh", axis = 1 : i64}
// CHECK: fxmlir.aten.tanh_backward %arg2, %[[T]]
// CHECK: fxmlir.aten.tanh
func.func @tanh(%x: !x, %b: !b, %g: !x) -> (!x, !x, !x) {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %1 = fxmlir.aten.tanh %0 : (!x) -> !x
  %2 = fxmlir.aten.tanh_backward %g, %1 : (!x, !x) -> !x
  %3 = fxmlir.aten.add.Tensor %x, %g {alpha = 1 : i64} : (!x, !x) -> !x
  %4 = fxmlir.aten.tanh %3 : (!x) -> !x
  return %1, %2, %4 : !x, !x, !x
}

// hardswish, a row naming its own ATen ops (fused_ops.py): both fuse; a
// bias_add with another use does not.
// CHECK-LABEL: func.func @hardswish
// CHECK: fxmlir.fused_bias_act %arg0, %arg1 {activation = "hardswish", axis = 1 : i64}
// CHECK: fxmlir.fused_bias_act_grad %arg2, %arg0, %arg1 {activation = "hardswish", axis = 1 : i64}
// CHECK: %[[S:.*]] = fxmlir.bias_add %arg2, %arg1
// CHECK: fxmlir.aten.hardswish %[[S]]
func.func @hardswish(%x: !x, %b: !b, %g: !x) -> (!x, !x, !x, !x) {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %1 = fxmlir.aten.hardswish %0 : (!x) -> !x
  %s = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %2 = fxmlir.aten.hardswish_backward %g, %s : (!x, !x) -> !x
  %m = fxmlir.bias_add %g, %b {axis = 1 : i64} : (!x, !b) -> !x
  %3 = fxmlir.aten.hardswish %m : (!x) -> !x
  return %1, %2, %3, %m : !x, !x, !x, !x
}


// Their negative cases: a multi-use bias_add, an f64 tensor.
// CHECK-LABEL: func.func @relu_silu_not_fused
// CHECK-NOT: fxmlir.fused_bias_act
func.func @relu_silu_not_fused(%x: !x, %b: !b, %y: tensor<8x64xf64, #fxmlir.device<"cpu">>,
                               %c: tensor<64xf64, #fxmlir.device<"cpu">>)
    -> (!x, !x, tensor<8x64xf64, #fxmlir.device<"cpu">>) {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %1 = fxmlir.aten.relu %0 : (!x) -> !x
  %2 = fxmlir.bias_add %y, %c {axis = 1 : i64} : (tensor<8x64xf64, #fxmlir.device<"cpu">>, tensor<64xf64, #fxmlir.device<"cpu">>) -> tensor<8x64xf64, #fxmlir.device<"cpu">>
  %3 = fxmlir.aten.silu %2 : (tensor<8x64xf64, #fxmlir.device<"cpu">>) -> tensor<8x64xf64, #fxmlir.device<"cpu">>
  return %1, %0, %3 : !x, !x, tensor<8x64xf64, #fxmlir.device<"cpu">>
}
