// Every hand-written op parses, prints, and parses again unchanged; the
// generic form parses back too.
// RUN: fxmlir-opt %s | fxmlir-opt | FileCheck %s
// RUN: fxmlir-opt %s --mlir-print-op-generic | fxmlir-opt | FileCheck %s

!x = tensor<8x16xf32, #fxmlir.device<"cpu">>
!b = tensor<16xf32, #fxmlir.device<"cpu">>
!m = tensor<8x16xi1, #fxmlir.device<"cpu">>

// CHECK-LABEL: func.func @bias_ops
func.func @bias_ops(%x: !x, %b: !b, %g: !x) -> (!x, !x, !x, !x, !m) {
  // CHECK: fxmlir.bias_add %{{.*}}, %{{.*}} {axis = 1 : i64}
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  // CHECK: fxmlir.fused_bias_act %{{.*}}, %{{.*}} {activation = "gelu_tanh", axis = -1 : i64}
  %1 = fxmlir.fused_bias_act %x, %b {activation = "gelu_tanh", axis = -1 : i64} : (!x, !b) -> !x
  // CHECK: fxmlir.fused_bias_act_grad %{{.*}}, %{{.*}}, %{{.*}} {activation = "gelu", axis = 1 : i64}
  %2 = fxmlir.fused_bias_act_grad %g, %x, %b {activation = "gelu", axis = 1 : i64} : (!x, !x, !b) -> !x
  // CHECK: %[[MASK:.*]] = fxmlir.random_mask_like %{{.*}} {p = 1.000000e-01 : f64} : (tensor<8x16xf32, #fxmlir.device<"cpu">>) -> tensor<8x16xi1, #fxmlir.device<"cpu">>
  %m = fxmlir.random_mask_like %x {p = 0.1 : f64} : (!x) -> !m
  // CHECK: fxmlir.fused_bias_add_mask_scale %{{.*}}, %{{.*}}, %[[MASK]] {axis = 1 : i64, scale = 1.1111111111111112 : f64}
  %3 = fxmlir.fused_bias_add_mask_scale %x, %b, %m {axis = 1 : i64, scale = 1.1111111111111112 : f64} : (!x, !b, !m) -> !x
  return %0, %1, %2, %3, %m : !x, !x, !x, !x, !m
}

// Dynamic dims and half types are fine.
// CHECK-LABEL: func.func @dynamic
func.func @dynamic(%x: tensor<?x?xbf16, #fxmlir.device<"cuda:0">>,
                   %b: tensor<?xbf16, #fxmlir.device<"cuda:0">>)
    -> tensor<?x?xbf16, #fxmlir.device<"cuda:0">> {
  // CHECK: fxmlir.bias_add {{.*}} -> tensor<?x?xbf16, #fxmlir.device<"cuda:0">>
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64}
      : (tensor<?x?xbf16, #fxmlir.device<"cuda:0">>, tensor<?xbf16, #fxmlir.device<"cuda:0">>)
      -> tensor<?x?xbf16, #fxmlir.device<"cuda:0">>
  return %0 : tensor<?x?xbf16, #fxmlir.device<"cuda:0">>
}

// CHECK-LABEL: func.func @plumbing
func.func @plumbing(%x: !x) -> (!x, none, !x) {
  // CHECK: %[[NONE:.*]] = fxmlir.none
  %none = fxmlir.none
  // CHECK: fxmlir.get_attr "sub.weight" : tensor<8x16xf32, #fxmlir.device<"cpu">>
  %w = fxmlir.get_attr "sub.weight" : !x
  // CHECK: fxmlir.call "mylib::scale"(%{{.*}}, %[[NONE]]) {args = [#fxmlir.operand<0>, 2.000000e+00, [#fxmlir.operand<1>, #fxmlir.none]], kwargs = {out_dtype = "float32"}}
  %r = fxmlir.call "mylib::scale"(%x, %none)
      {args = [#fxmlir.operand<0>, 2.0 : f64, [#fxmlir.operand<1>, #fxmlir.none]],
       kwargs = {out_dtype = "float32"}} : (!x, none) -> !x
  return %w, %none, %r : !x, none, !x
}

// CHECK-LABEL: func.func @jit
func.func @jit(%x: !x, %b: !b) -> !x {
  // CHECK: fxmlir.mlir_jit @region_0(%{{.*}}, %{{.*}}) : (tensor<8x16xf32, #fxmlir.device<"cpu">>, tensor<16xf32, #fxmlir.device<"cpu">>) -> tensor<8x16xf32, #fxmlir.device<"cpu">>
  %0 = fxmlir.mlir_jit @region_0(%x, %b) : (!x, !b) -> !x
  return %0 : !x
}

func.func private @region_0(%x: !x, %b: !b) -> !x {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  return %0 : !x
}

// CHECK-LABEL: func.func @embedding_grad
// CHECK: fxmlir.embedding_grad %{{.*}}, %{{.*}} {num_weights = 100 : i64, padding_idx = 3 : i64}
func.func @embedding_grad(%g: tensor<?x16xf32, #fxmlir.device<"cpu">>, %i: tensor<?xsi32, #fxmlir.device<"cpu">>) -> tensor<100x16xf32, #fxmlir.device<"cpu">> {
  %0 = fxmlir.embedding_grad %g, %i {num_weights = 100 : i64, padding_idx = 3 : i64} : (tensor<?x16xf32, #fxmlir.device<"cpu">>, tensor<?xsi32, #fxmlir.device<"cpu">>) -> tensor<100x16xf32, #fxmlir.device<"cpu">>
  return %0 : tensor<100x16xf32, #fxmlir.device<"cpu">>
}

// CHECK-LABEL: func.func @cast_tensors
// CHECK: fxmlir.cast_tensors %{{.*}}, %{{.*}} {dtype = bf16}
func.func @cast_tensors(%x: !x, %b: !b) -> (tensor<8x16xbf16, #fxmlir.device<"cpu">>, tensor<16xbf16, #fxmlir.device<"cpu">>) {
  %0:2 = fxmlir.cast_tensors %x, %b {dtype = bf16} : (!x, !b) -> (tensor<8x16xbf16, #fxmlir.device<"cpu">>, tensor<16xbf16, #fxmlir.device<"cpu">>)
  return %0#0, %0#1 : tensor<8x16xbf16, #fxmlir.device<"cpu">>, tensor<16xbf16, #fxmlir.device<"cpu">>
}
