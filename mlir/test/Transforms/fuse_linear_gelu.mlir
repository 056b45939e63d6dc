// RUN: fxmlir-opt %s --fxmlir-fuse-linear-gelu | FileCheck %s

!x = tensor<4x8x64xbf16, #fxmlir.device<"cuda:0">>
!w = tensor<128x64xbf16, #fxmlir.device<"cuda:0">>
!b = tensor<128xbf16, #fxmlir.device<"cuda:0">>
!y = tensor<4x8x128xbf16, #fxmlir.device<"cuda:0">>

// nn.Linear before autodiff: linear without bias, then bias_add.
// CHECK-LABEL: func.func @linear
// CHECK: %[[Y:.*]], %{{.*}} = fxmlir.fused_linear_gelu %arg0, %arg1, %arg2 {approximate = "tanh"} : {{.*}} -> (tensor<4x8x128xbf16, {{.*}}>, tensor<4x8x128xbf16, {{.*}}>)
// CHECK-NOT: fxmlir.aten.gelu
// CHECK: return %[[Y]]
func.func @linear(%x: !x, %w: !w, %b: !b) -> !y {
  %none = fxmlir.none
  %0 = fxmlir.aten.linear %x, %w, %none : (!x, !w, none) -> !y
  %1 = fxmlir.bias_add %0, %b {axis = 2 : i64} : (!y, !b) -> !y
  %2 = fxmlir.aten.gelu %1 {approximate = "tanh"} : (!y) -> !y
  return %2 : !y
}


// addmm decomposed (AOTAutograd's graphs, HF's Conv1D): mm on the rows,
// then a view; the weight is t(m), and t(t(w)) is w.
// CHECK-LABEL: func.func @mm_view
// CHECK: %[[T:.*]] = fxmlir.aten.t %arg1 : (tensor<64x128xf32, #fxmlir.device<"cuda:0">>) -> tensor<128x64xf32, #fxmlir.device<"cuda:0">>
// CHECK: %[[Y:.*]], %{{.*}} = fxmlir.fused_linear_gelu %arg0, %[[T]], %arg2 {approximate = "tanh"}
// CHECK: %[[V:.*]] = fxmlir.aten.view %[[Y]] {size = array<i64: 4, 8, 128>}
// CHECK: %[[Y2:.*]], %{{.*}} = fxmlir.fused_linear_gelu %arg0, %arg3, %arg2 {approximate = "tanh"}
// CHECK: return %[[V]], %[[Y2]]
func.func @mm_view(%x: tensor<32x64xf32, #fxmlir.device<"cuda:0">>, %m: tensor<64x128xf32, #fxmlir.device<"cuda:0">>,
                   %b: tensor<128xf32, #fxmlir.device<"cuda:0">>, %w: tensor<128x64xf32, #fxmlir.device<"cuda:0">>)
    -> (tensor<4x8x128xf32, #fxmlir.device<"cuda:0">>, tensor<32x128xf32, #fxmlir.device<"cuda:0">>) {
  %0 = fxmlir.aten.mm %x, %m : (tensor<32x64xf32, #fxmlir.device<"cuda:0">>, tensor<64x128xf32, #fxmlir.device<"cuda:0">>) -> tensor<32x128xf32, #fxmlir.device<"cuda:0">>
  %1 = fxmlir.aten._unsafe_view %0 {size = array<i64: 4, 8, 128>} : (tensor<32x128xf32, #fxmlir.device<"cuda:0">>) -> tensor<4x8x128xf32, #fxmlir.device<"cuda:0">>
  %2 = fxmlir.bias_add %1, %b {axis = 2 : i64} : (tensor<4x8x128xf32, #fxmlir.device<"cuda:0">>, tensor<128xf32, #fxmlir.device<"cuda:0">>) -> tensor<4x8x128xf32, #fxmlir.device<"cuda:0">>
  %3 = fxmlir.aten.gelu %2 {approximate = "tanh"} : (tensor<4x8x128xf32, #fxmlir.device<"cuda:0">>) -> tensor<4x8x128xf32, #fxmlir.device<"cuda:0">>
  %t = fxmlir.aten.t %w : (tensor<128x64xf32, #fxmlir.device<"cuda:0">>) -> tensor<64x128xf32, #fxmlir.device<"cuda:0">>
  %4 = fxmlir.aten.mm %x, %t : (tensor<32x64xf32, #fxmlir.device<"cuda:0">>, tensor<64x128xf32, #fxmlir.device<"cuda:0">>) -> tensor<32x128xf32, #fxmlir.device<"cuda:0">>
  %5 = fxmlir.bias_add %4, %b {axis = 1 : i64} : (tensor<32x128xf32, #fxmlir.device<"cuda:0">>, tensor<128xf32, #fxmlir.device<"cuda:0">>) -> tensor<32x128xf32, #fxmlir.device<"cuda:0">>
  %6 = fxmlir.aten.gelu %5 {approximate = "tanh"} : (tensor<32x128xf32, #fxmlir.device<"cuda:0">>) -> tensor<32x128xf32, #fxmlir.device<"cuda:0">>
  return %3, %6 : tensor<4x8x128xf32, #fxmlir.device<"cuda:0">>, tensor<32x128xf32, #fxmlir.device<"cuda:0">>
}


// cuBLASLt's GELU is the tanh form: an erf GELU is left alone.
// CHECK-LABEL: func.func @erf
// CHECK-NOT: fxmlir.fused_linear_gelu
func.func @erf(%x: !x, %w: !w, %b: !b) -> !y {
  %none = fxmlir.none
  %0 = fxmlir.aten.linear %x, %w, %none : (!x, !w, none) -> !y
  %1 = fxmlir.bias_add %0, %b {axis = 2 : i64} : (!y, !b) -> !y
  %2 = fxmlir.aten.gelu %1 {approximate = "none"} : (!y) -> !y
  return %2 : !y
}


// On CPU the bias_add + GELU kernel stays (fxmlir-fuse-bias-add-activation).
// CHECK-LABEL: func.func @cpu
// CHECK-NOT: fxmlir.fused_linear_gelu
func.func @cpu(%x: tensor<8x64xf32, #fxmlir.device<"cpu">>, %w: tensor<128x64xf32, #fxmlir.device<"cpu">>, %b: tensor<128xf32, #fxmlir.device<"cpu">>) -> tensor<8x128xf32, #fxmlir.device<"cpu">> {
  %none = fxmlir.none
  %0 = fxmlir.aten.linear %x, %w, %none : (tensor<8x64xf32, #fxmlir.device<"cpu">>, tensor<128x64xf32, #fxmlir.device<"cpu">>, none) -> tensor<8x128xf32, #fxmlir.device<"cpu">>
  %1 = fxmlir.bias_add %0, %b {axis = 1 : i64} : (tensor<8x128xf32, #fxmlir.device<"cpu">>, tensor<128xf32, #fxmlir.device<"cpu">>) -> tensor<8x128xf32, #fxmlir.device<"cpu">>
  %2 = fxmlir.aten.gelu %1 {approximate = "tanh"} : (tensor<8x128xf32, #fxmlir.device<"cpu">>) -> tensor<8x128xf32, #fxmlir.device<"cpu">>
  return %2 : tensor<8x128xf32, #fxmlir.device<"cpu">>
}


// The product or the bias_add used elsewhere (saved for a backward graph):
// fusing would compute it twice. A bias on another dim, f64, a linear with
// its own bias: none fuses.
// CHECK-LABEL: func.func @not_fused
// CHECK-NOT: fxmlir.fused_linear_gelu
func.func @not_fused(%x: !x, %w: !w, %b: !b, %c: tensor<8xbf16, #fxmlir.device<"cuda:0">>,
                     %x64: tensor<8x64xf64, #fxmlir.device<"cuda:0">>, %w64: tensor<128x64xf64, #fxmlir.device<"cuda:0">>,
                     %b64: tensor<128xf64, #fxmlir.device<"cuda:0">>) -> (!y, !y, !y, !y, !y, tensor<8x128xf64, #fxmlir.device<"cuda:0">>, !y) {
  %none = fxmlir.none
  %0 = fxmlir.aten.linear %x, %w, %none : (!x, !w, none) -> !y
  %1 = fxmlir.bias_add %0, %b {axis = 2 : i64} : (!y, !b) -> !y
  %2 = fxmlir.aten.gelu %1 {approximate = "tanh"} : (!y) -> !y
  %3 = fxmlir.aten.linear %x, %w, %none : (!x, !w, none) -> !y
  %4 = fxmlir.bias_add %3, %b {axis = 2 : i64} : (!y, !b) -> !y
  %5 = fxmlir.aten.gelu %4 {approximate = "tanh"} : (!y) -> !y
  %6 = fxmlir.aten.linear %x, %w, %none : (!x, !w, none) -> !y
  %7 = fxmlir.bias_add %6, %c {axis = 1 : i64} : (!y, tensor<8xbf16, #fxmlir.device<"cuda:0">>) -> !y
  %8 = fxmlir.aten.gelu %7 {approximate = "tanh"} : (!y) -> !y
  %none64 = fxmlir.none
  %9 = fxmlir.aten.linear %x64, %w64, %none64 : (tensor<8x64xf64, #fxmlir.device<"cuda:0">>, tensor<128x64xf64, #fxmlir.device<"cuda:0">>, none) -> tensor<8x128xf64, #fxmlir.device<"cuda:0">>
  %10 = fxmlir.bias_add %9, %b64 {axis = 1 : i64} : (tensor<8x128xf64, #fxmlir.device<"cuda:0">>, tensor<128xf64, #fxmlir.device<"cuda:0">>) -> tensor<8x128xf64, #fxmlir.device<"cuda:0">>
  %11 = fxmlir.aten.gelu %10 {approximate = "tanh"} : (tensor<8x128xf64, #fxmlir.device<"cuda:0">>) -> tensor<8x128xf64, #fxmlir.device<"cuda:0">>
  %12 = fxmlir.aten.linear %x, %w, %b : (!x, !w, !b) -> !y
  %13 = fxmlir.bias_add %12, %b {axis = 2 : i64} : (!y, !b) -> !y
  %14 = fxmlir.aten.gelu %13 {approximate = "tanh"} : (!y) -> !y
  return %2, %0, %5, %4, %8, %11, %14 : !y, !y, !y, !y, !y, tensor<8x128xf64, #fxmlir.device<"cuda:0">>, !y
}
