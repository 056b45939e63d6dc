// RUN: fxmlir-opt %s --fxmlir-fuse-gemm-epilogues | FileCheck %s

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


// Backward: the GELU's output gradient is a product (the next layer's input
// gradient), viewed back to x's leading dims: DGELU_BGRAD in that product.
// CHECK-LABEL: func.func @gelu_grad_of_product
// CHECK: %[[A:.*]] = fxmlir.aten.view %arg0 {size = array<i64: 4, 8, 32>}
// CHECK: = fxmlir.fused_linear_gelu_grad_mm %[[A]], %arg1, %arg2, %arg3, %arg4 {approximate = "tanh"}
// CHECK-NOT: fxmlir.aten.mm
func.func @gelu_grad_of_product(%a: tensor<32x32xbf16, #fxmlir.device<"cuda:0">>, %b: tensor<32x128xbf16, #fxmlir.device<"cuda:0">>,
                                %x: !x, %w: !w, %pre: !y) -> (!x, !w, !b) {
  %0 = fxmlir.aten.mm %a, %b : (tensor<32x32xbf16, #fxmlir.device<"cuda:0">>, tensor<32x128xbf16, #fxmlir.device<"cuda:0">>) -> tensor<32x128xbf16, #fxmlir.device<"cuda:0">>
  %1 = fxmlir.aten.view %0 {size = array<i64: 4, 8, 128>} : (tensor<32x128xbf16, #fxmlir.device<"cuda:0">>) -> !y
  %2:3 = fxmlir.fused_linear_gelu_grad %1, %x, %w, %pre {approximate = "tanh"} : (!y, !x, !w, !y) -> (!x, !w, !b)
  return %2#0, %2#1, %2#2 : !x, !w, !b
}


// erf GELU (cuBLASLt's gradient is tanh's) and a product used elsewhere
// stay as they are.
// CHECK-LABEL: func.func @gelu_grad_not_fused
// CHECK-NOT: fxmlir.fused_linear_gelu_grad_mm
func.func @gelu_grad_not_fused(%a: tensor<32x32xbf16, #fxmlir.device<"cuda:0">>, %b: tensor<32x128xbf16, #fxmlir.device<"cuda:0">>,
                               %x: !x, %w: !w, %pre: !y) -> (!x, !x, tensor<32x128xbf16, #fxmlir.device<"cuda:0">>) {
  %0 = fxmlir.aten.mm %a, %b : (tensor<32x32xbf16, #fxmlir.device<"cuda:0">>, tensor<32x128xbf16, #fxmlir.device<"cuda:0">>) -> tensor<32x128xbf16, #fxmlir.device<"cuda:0">>
  %1 = fxmlir.aten.view %0 {size = array<i64: 4, 8, 128>} : (tensor<32x128xbf16, #fxmlir.device<"cuda:0">>) -> !y
  %2:3 = fxmlir.fused_linear_gelu_grad %1, %x, %w, %pre {approximate = "none"} : (!y, !x, !w, !y) -> (!x, !w, !b)
  %3 = fxmlir.aten.mm %a, %b : (tensor<32x32xbf16, #fxmlir.device<"cuda:0">>, tensor<32x128xbf16, #fxmlir.device<"cuda:0">>) -> tensor<32x128xbf16, #fxmlir.device<"cuda:0">>
  %4 = fxmlir.aten.view %3 {size = array<i64: 4, 8, 128>} : (tensor<32x128xbf16, #fxmlir.device<"cuda:0">>) -> !y
  %5:3 = fxmlir.fused_linear_gelu_grad %4, %x, %w, %pre {approximate = "tanh"} : (!y, !x, !w, !y) -> (!x, !w, !b)
  return %2#0, %5#0, %3 : !x, !x, tensor<32x128xbf16, #fxmlir.device<"cuda:0">>
}


!g = tensor<32x16xf32, #fxmlir.device<"cuda:0">>
!h = tensor<32x64xf32, #fxmlir.device<"cuda:0">>

// A linear layer's weight and bias gradients (AOTAutograd's spelling):
// BGRADB sums the bias gradient inside the weight-gradient matmul.
// CHECK-LABEL: func.func @weight_bias_grad
// CHECK: %[[GW:.*]], %[[GB:.*]] = fxmlir.linear_weight_bias_grad %arg0, %arg1
// CHECK-DAG: %[[T:.*]] = fxmlir.aten.t %[[GW]]
// CHECK-DAG: %[[B:.*]] = fxmlir.aten.view %[[GB]] {size = array<i64: 1, 16>}
// CHECK: %[[B2:.*]] = fxmlir.aten.view %[[B]] {size = array<i64: 16>}
// CHECK: return %[[T]], %[[B2]]
func.func @weight_bias_grad(%g: !g, %h: !h) -> (tensor<64x16xf32, #fxmlir.device<"cuda:0">>, tensor<16xf32, #fxmlir.device<"cuda:0">>) {
  %0 = fxmlir.aten.t %g : (!g) -> tensor<16x32xf32, #fxmlir.device<"cuda:0">>
  %1 = fxmlir.aten.mm %0, %h : (tensor<16x32xf32, #fxmlir.device<"cuda:0">>, !h) -> tensor<16x64xf32, #fxmlir.device<"cuda:0">>
  %2 = fxmlir.aten.t %1 : (tensor<16x64xf32, #fxmlir.device<"cuda:0">>) -> tensor<64x16xf32, #fxmlir.device<"cuda:0">>
  %3 = fxmlir.aten.sum.dim_IntList %g {dim = array<i64: 0>, keepdim = true} : (!g) -> tensor<1x16xf32, #fxmlir.device<"cuda:0">>
  %4 = fxmlir.aten.view %3 {size = array<i64: 16>} : (tensor<1x16xf32, #fxmlir.device<"cuda:0">>) -> tensor<16xf32, #fxmlir.device<"cuda:0">>
  return %2, %4 : tensor<64x16xf32, #fxmlir.device<"cuda:0">>, tensor<16xf32, #fxmlir.device<"cuda:0">>
}


// Not a linear layer's gradients: a row sum, no weight gradient, a CPU
// tensor.
// CHECK-LABEL: func.func @not_weight_bias_grad
// CHECK-NOT: fxmlir.linear_weight_bias_grad
func.func @not_weight_bias_grad(%g: !g, %h: !h, %c: tensor<32x16xf32, #fxmlir.device<"cpu">>, %d: tensor<32x64xf32, #fxmlir.device<"cpu">>)
    -> (tensor<16x64xf32, #fxmlir.device<"cuda:0">>, tensor<32xf32, #fxmlir.device<"cuda:0">>, tensor<16xf32, #fxmlir.device<"cuda:0">>,
        tensor<16x64xf32, #fxmlir.device<"cpu">>, tensor<16xf32, #fxmlir.device<"cpu">>) {
  %0 = fxmlir.aten.t %g : (!g) -> tensor<16x32xf32, #fxmlir.device<"cuda:0">>
  %1 = fxmlir.aten.mm %0, %h : (tensor<16x32xf32, #fxmlir.device<"cuda:0">>, !h) -> tensor<16x64xf32, #fxmlir.device<"cuda:0">>
  %2 = fxmlir.aten.sum.dim_IntList %g {dim = array<i64: 1>, keepdim = false} : (!g) -> tensor<32xf32, #fxmlir.device<"cuda:0">>
  %3 = fxmlir.aten.sum.dim_IntList %h {dim = array<i64: 0>, keepdim = false} : (!h) -> tensor<64xf32, #fxmlir.device<"cuda:0">>
  %4 = fxmlir.aten.t %c : (tensor<32x16xf32, #fxmlir.device<"cpu">>) -> tensor<16x32xf32, #fxmlir.device<"cpu">>
  %5 = fxmlir.aten.mm %4, %d : (tensor<16x32xf32, #fxmlir.device<"cpu">>, tensor<32x64xf32, #fxmlir.device<"cpu">>) -> tensor<16x64xf32, #fxmlir.device<"cpu">>
  %6 = fxmlir.aten.sum.dim_IntList %c {dim = array<i64: 0>, keepdim = false} : (tensor<32x16xf32, #fxmlir.device<"cpu">>) -> tensor<16xf32, #fxmlir.device<"cpu">>
  %7 = fxmlir.aten.sum.dim_IntList %g {dim = array<i64: 0>, keepdim = false, dtype = f64} : (!g) -> tensor<16xf32, #fxmlir.device<"cuda:0">>
  return %1, %2, %7, %5, %6 : tensor<16x64xf32, #fxmlir.device<"cuda:0">>, tensor<32xf32, #fxmlir.device<"cuda:0">>, tensor<16xf32, #fxmlir.device<"cuda:0">>,
      tensor<16x64xf32, #fxmlir.device<"cpu">>, tensor<16xf32, #fxmlir.device<"cpu">>
}
