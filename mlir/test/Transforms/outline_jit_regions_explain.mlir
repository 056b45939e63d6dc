// RUN: fxmlir-opt %s -split-input-file --fxmlir-outline-jit-regions="cost-model=true explain=true" | FileCheck %s
// RUN: fxmlir-opt %s -split-input-file --fxmlir-outline-jit-regions="cost-model=true" | FileCheck %s --check-prefix=QUIET

// With explain, each op left out of the regions says why in fxmlir.left_out
// (fxmlir explain reads it); without, nothing is marked.
// QUIET-NOT: fxmlir.left_out

!s = tensor<8x64xf32, #fxmlir.device<"cpu">>
!r = tensor<8xf32, #fxmlir.device<"cpu">>

// An op the JIT cannot lower between lowerable ones splits them: the tanh
// before it is alone, the ops after it form a region and are not marked.
// CHECK-LABEL: func.func @split
// CHECK: fxmlir.aten.tanh %{{.*}} {fxmlir.left_out = "a lone op: no lowerable op next to it to join in a region"}
// CHECK: fxmlir.call "aten::erfinv"{{.*}}fxmlir.left_out = "not lowerable by the JIT: it splits the ops around it into separate regions"
// CHECK-NEXT: fxmlir.mlir_jit @jit_tanh_mul_sum
// CHECK-NOT: left_out
// CHECK: func.func private @jit_tanh_mul_sum
func.func @split(%a: !s, %b: !s) -> !r {
  %0 = fxmlir.aten.tanh %a : (!s) -> !s
  %1 = "fxmlir.call"(%0) {target = "aten::erfinv", args = [#fxmlir.operand<0>], kwargs = {}} : (!s) -> !s
  %2 = fxmlir.aten.tanh %1 : (!s) -> !s
  %3 = fxmlir.aten.mul.Tensor %2, %b : (!s, !s) -> !s
  %4 = fxmlir.aten.sum.dim_IntList %3 {dim = array<i64: 1>, keepdim = false} : (!s) -> !r
  return %4 : !r
}

// -----

!t = tensor<1024x1024xf32, #fxmlir.device<"cpu">>

// Two row reductions of one input: the region reads it once, but the JIT's
// slower rows cost more than that saves. Both ops carry the region's bytes.
// CHECK-LABEL: func.func @refused_by_the_cost_model
// CHECK: fxmlir.aten._softmax {{.*}}fxmlir.left_out = "the cost model: its region (jit_softmax_log_softmax) would move [[REGION:[0-9]+]] bytes, eager's kernels [[EAGER:[0-9]+]]"
// CHECK: fxmlir.aten._log_softmax {{.*}}fxmlir.left_out = "the cost model: its region (jit_softmax_log_softmax) would move [[REGION]] bytes, eager's kernels [[EAGER]]"
func.func @refused_by_the_cost_model(%x: !t) -> (!t, !t) {
  %0 = fxmlir.aten._softmax %x {dim = -1 : i64, half_to_float = false} : (!t) -> !t
  %1 = fxmlir.aten._log_softmax %x {dim = -1 : i64, half_to_float = false} : (!t) -> !t
  return %0, %1 : !t, !t
}

// -----

!t = tensor<8x8xf32, #fxmlir.device<"cpu">>
!v = tensor<64xf32, #fxmlir.device<"cpu">>

// A GEMM is not an elementwise op a region could hold: it splits the chain
// without a verdict of its own. A view computes nothing: it gets none either.
// CHECK-LABEL: func.func @gemm_and_view
// CHECK: fxmlir.aten.add.Tensor {{.*}}fxmlir.left_out = "a lone op
// CHECK-NOT: left_out
// CHECK: return
func.func @gemm_and_view(%a: !t, %b: tensor<8x16xf32, #fxmlir.device<"cpu">>) -> !v {
  %0 = fxmlir.aten.add.Tensor %a, %a {alpha = 1 : i64} : (!t, !t) -> !t
  %1 = fxmlir.aten.mm %0, %b : (!t, tensor<8x16xf32, #fxmlir.device<"cpu">>) -> tensor<8x16xf32, #fxmlir.device<"cpu">>
  %2 = fxmlir.aten.tanh %1 : (tensor<8x16xf32, #fxmlir.device<"cpu">>) -> tensor<8x16xf32, #fxmlir.device<"cpu">>
  %3 = fxmlir.aten.mul.Tensor %2, %2 : (tensor<8x16xf32, #fxmlir.device<"cpu">>, tensor<8x16xf32, #fxmlir.device<"cpu">>) -> tensor<8x16xf32, #fxmlir.device<"cpu">>
  %4 = fxmlir.aten.view %a {size = array<i64: 64>} : (!t) -> !v
  return %4 : !v
}
