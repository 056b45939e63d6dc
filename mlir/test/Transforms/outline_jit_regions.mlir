// RUN: fxmlir-opt %s -split-input-file --fxmlir-outline-jit-regions="device-types=cpu" | FileCheck %s --check-prefix=DEVICES
// RUN: fxmlir-opt %s --fxmlir-outline-jit-regions --split-input-file | FileCheck %s

!t = tensor<8x64xf32, #fxmlir.device<"cpu">>

// A chain becomes one function named after its ops and one mlir_jit op.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[A:.*]]: tensor<8x64xf32, #fxmlir.device<"cpu">>, %[[B:.*]]: tensor<{{.*}}>, %[[C:.*]]: tensor<{{.*}}>)
// CHECK-NEXT: %[[R:.*]] = fxmlir.mlir_jit @jit_add_tanh_mul(%[[A]], %[[B]], %[[C]])
// CHECK-NEXT: return %[[R]]
// CHECK: func.func private @jit_add_tanh_mul
// CHECK-NEXT: fxmlir.aten.add.Tensor
// CHECK-NEXT: fxmlir.aten.tanh
// CHECK-NEXT: fxmlir.aten.mul.Tensor
// CHECK-NEXT: return
func.func @chain(%a: !t, %b: !t, %c: !t) -> !t {
  %0 = fxmlir.aten.add.Tensor %a, %b {alpha = 1 : i64} : (!t, !t) -> !t
  %1 = fxmlir.aten.tanh %0 : (!t) -> !t
  %2 = fxmlir.aten.mul.Tensor %1, %c : (!t, !t) -> !t
  return %2 : !t
}

// -----

!t = tensor<8x64xf32, #fxmlir.device<"cpu">>

// A value also used outside the region (returned, saved for backward) is a
// second result.
// CHECK-LABEL: func.func @extra_output
// CHECK: %[[R:.*]]:2 = fxmlir.mlir_jit @jit_sigmoid_mul
// CHECK-NEXT: return %[[R]]#1, %[[R]]#0
// CHECK: func.func private @jit_sigmoid_mul({{.*}}) -> (tensor<8x64xf32, #fxmlir.device<"cpu">>, tensor<8x64xf32, #fxmlir.device<"cpu">>)
func.func @extra_output(%x: !t) -> (!t, !t) {
  %0 = fxmlir.aten.sigmoid %x : (!t) -> !t
  %1 = fxmlir.aten.mul.Tensor %0, %x : (!t, !t) -> !t
  return %1, %0 : !t, !t
}

// -----

!t = tensor<8x8xf32, #fxmlir.device<"cpu">>

// A GEMM in the middle splits the chain; the lone add left before it is not
// worth a region.
// CHECK-LABEL: func.func @unsupported_in_the_middle
// CHECK: fxmlir.aten.add.Tensor
// CHECK-NEXT: fxmlir.aten.mm
// CHECK-NEXT: fxmlir.mlir_jit @jit_tanh_mul
// CHECK-NOT: func.func private @jit_add
func.func @unsupported_in_the_middle(%a: !t, %b: !t) -> !t {
  %0 = fxmlir.aten.add.Tensor %a, %b {alpha = 1 : i64} : (!t, !t) -> !t
  %1 = fxmlir.aten.mm %0, %b : (!t, !t) -> !t
  %2 = fxmlir.aten.tanh %1 : (!t) -> !t
  %3 = fxmlir.aten.mul.Tensor %2, %a : (!t, !t) -> !t
  return %3 : !t
}

// -----

!t = tensor<8x8xf32, #fxmlir.device<"cpu">>

// %1 feeds an op outside (mm) whose result comes back into the chain: one
// region would need mm both before and after it, so the chain splits there.
// CHECK-LABEL: func.func @no_cycle_through_outside
// CHECK: %[[FIRST:.*]] = fxmlir.mlir_jit @jit_add_tanh(
// CHECK-NEXT: %[[MM:.*]] = fxmlir.aten.mm %[[FIRST]]
// CHECK-NEXT: fxmlir.mlir_jit @jit_mul_exp(%[[FIRST]], %[[MM]])
// CHECK: func.func private @jit_add_tanh
// CHECK: func.func private @jit_mul_exp
func.func @no_cycle_through_outside(%a: !t, %b: !t) -> !t {
  %0 = fxmlir.aten.add.Tensor %a, %b {alpha = 1 : i64} : (!t, !t) -> !t
  %1 = fxmlir.aten.tanh %0 : (!t) -> !t
  %2 = fxmlir.aten.mm %1, %b : (!t, !t) -> !t
  %3 = fxmlir.aten.mul.Tensor %1, %2 : (!t, !t) -> !t
  %4 = fxmlir.aten.exp %3 : (!t) -> !t
  return %4 : !t
}

// -----

// Complex and float8 tensors have no lowering: nothing is outlined.
// CHECK-LABEL: func.func @unsupported_dtype
// CHECK-NOT: fxmlir.mlir_jit
// CHECK: fxmlir.aten.add.Tensor
// CHECK-NEXT: fxmlir.aten.mul.Tensor
// CHECK-NEXT: fxmlir.aten.add.Tensor
// CHECK-NEXT: fxmlir.aten.mul.Tensor
func.func @unsupported_dtype(%a: tensor<4xcomplex<f32>, #fxmlir.device<"cpu">>,
                             %b: tensor<4xf8E4M3FN, #fxmlir.device<"cpu">>)
    -> (tensor<4xcomplex<f32>, #fxmlir.device<"cpu">>, tensor<4xf8E4M3FN, #fxmlir.device<"cpu">>) {
  %0 = fxmlir.aten.add.Tensor %a, %a {alpha = 1 : i64} : (tensor<4xcomplex<f32>, #fxmlir.device<"cpu">>, tensor<4xcomplex<f32>, #fxmlir.device<"cpu">>) -> tensor<4xcomplex<f32>, #fxmlir.device<"cpu">>
  %1 = fxmlir.aten.mul.Tensor %0, %a : (tensor<4xcomplex<f32>, #fxmlir.device<"cpu">>, tensor<4xcomplex<f32>, #fxmlir.device<"cpu">>) -> tensor<4xcomplex<f32>, #fxmlir.device<"cpu">>
  %2 = fxmlir.aten.add.Tensor %b, %b {alpha = 1 : i64} : (tensor<4xf8E4M3FN, #fxmlir.device<"cpu">>, tensor<4xf8E4M3FN, #fxmlir.device<"cpu">>) -> tensor<4xf8E4M3FN, #fxmlir.device<"cpu">>
  %3 = fxmlir.aten.mul.Tensor %2, %b : (tensor<4xf8E4M3FN, #fxmlir.device<"cpu">>, tensor<4xf8E4M3FN, #fxmlir.device<"cpu">>) -> tensor<4xf8E4M3FN, #fxmlir.device<"cpu">>
  return %1, %3 : tensor<4xcomplex<f32>, #fxmlir.device<"cpu">>, tensor<4xf8E4M3FN, #fxmlir.device<"cpu">>
}

// -----

!x = tensor<8x64xbf16, #fxmlir.device<"cuda:0">>
!b = tensor<64xbf16, #fxmlir.device<"cuda:0">>
!m = tensor<8x64xi1, #fxmlir.device<"cuda:0">>

// The hand-written fusions stay; what follows them is a region of its own.
// CHECK-LABEL: func.func @hand_written_fusions
// CHECK: %[[MASK:.*]] = fxmlir.random_mask_like
// CHECK: %[[DROP:.*]] = fxmlir.fused_bias_add_mask_scale
// CHECK: %[[GELU:.*]] = fxmlir.fused_bias_act
// CHECK: %[[BIAS:.*]] = fxmlir.bias_add
// CHECK: fxmlir.mlir_jit @jit_mul_add_tanh(%[[GELU]], %[[DROP]], %[[BIAS]])
// CHECK: func.func private @jit_mul_add_tanh
// CHECK-NOT: fxmlir.fused
// CHECK-NOT: fxmlir.bias_add
// CHECK: return
func.func @hand_written_fusions(%x: !x, %b: !b) -> !x {
  %mask = fxmlir.random_mask_like %x {p = 1.000000e-01 : f64} : (!x) -> !m
  %0 = fxmlir.fused_bias_add_mask_scale %x, %b, %mask {axis = 1 : i64, scale = 1.1 : f64} : (!x, !b, !m) -> !x
  %1 = fxmlir.fused_bias_act %x, %b {activation = "gelu_tanh", axis = 1 : i64} : (!x, !b) -> !x
  %2 = fxmlir.bias_add %x, %b {axis = 1 : i64} : (!x, !b) -> !x
  %3 = fxmlir.aten.mul.Tensor %1, %0 : (!x, !x) -> !x
  %4 = fxmlir.aten.add.Tensor %3, %2 {alpha = 1 : i64} : (!x, !x) -> !x
  %5 = fxmlir.aten.tanh %4 : (!x) -> !x
  return %5 : !x
}

// -----

!t = tensor<8x64xf32, #fxmlir.device<"cpu">>

// One cheap op alone is not worth a call, and detach computes nothing.
// CHECK-LABEL: func.func @too_small
// CHECK-NOT: fxmlir.mlir_jit
func.func @too_small(%x: !t) -> (!t, !t) {
  %0 = fxmlir.aten.tanh %x : (!t) -> !t
  %1 = fxmlir.aten.detach %0 : (!t) -> !t
  return %0, %1 : !t, !t
}

// -----

!t = tensor<?x64xf32, #fxmlir.device<"cpu">>
!w = tensor<64xf32, #fxmlir.device<"cpu">>
!s = tensor<?x1xf32, #fxmlir.device<"cpu">>

// Two chains meeting in one op merge; softmax and a weightless layer norm
// join too, their None operand cloned in.
// CHECK-LABEL: func.func @merge_and_compose
// CHECK-NEXT: %[[R:.*]]:3 = fxmlir.mlir_jit @jit_add_mul_sub_native_layer_norm_softmax(
// CHECK: func.func private @jit_add_mul_sub_native_layer_norm_softmax
// CHECK: %[[NONE:.*]] = fxmlir.none
// CHECK: fxmlir.aten.native_layer_norm %{{.*}}, %[[NONE]], %[[NONE]]
func.func @merge_and_compose(%a: !t, %b: !t, %c: !t) -> (!t, !s, !s) {
  %0 = fxmlir.aten.add.Tensor %a, %b {alpha = 1 : i64} : (!t, !t) -> !t
  %1 = fxmlir.aten.mul.Tensor %b, %c : (!t, !t) -> !t
  %2 = fxmlir.aten.sub.Tensor %0, %1 {alpha = 1 : i64} : (!t, !t) -> !t
  %none = fxmlir.none
  %3:3 = fxmlir.aten.native_layer_norm %2, %none, %none {normalized_shape = array<i64: 64>, eps = 1.0e-05 : f64} : (!t, none, none) -> (!t, !s, !s)
  %4 = fxmlir.aten._softmax %3#0 {dim = -1 : i64, half_to_float = false} : (!t) -> !t
  return %4, %3#1, %3#2 : !t, !s, !s
}

// -----

!t = tensor<8x64xf32, #fxmlir.device<"cpu">>

// Python scalars reach typed ops as fxmlir.call; known ATen targets join.
// Reductions over dims other than the last or all leading ones do not.
// CHECK-LABEL: func.func @calls_and_reductions
// CHECK: fxmlir.mlir_jit @jit_mul_silu_sum
// CHECK: fxmlir.aten.sum.dim_IntList %{{.*}} {dim = array<i64: 0, 1>
// CHECK: func.func private @jit_mul_silu_sum
// CHECK-NEXT: fxmlir.call "aten::mul.Tensor"
// CHECK-NEXT: fxmlir.aten.silu
// CHECK-NEXT: fxmlir.aten.sum.dim_IntList %{{.*}} {dim = array<i64: -1>
func.func @calls_and_reductions(%x: !t) -> (tensor<8xf32, #fxmlir.device<"cpu">>, tensor<f32, #fxmlir.device<"cpu">>) {
  %0 = "fxmlir.call"(%x) {target = "aten::mul.Tensor", args = [#fxmlir.operand<0>, 0.5 : f64], kwargs = {}} : (!t) -> !t
  %1 = fxmlir.aten.silu %0 : (!t) -> !t
  %2 = fxmlir.aten.sum.dim_IntList %1 {dim = array<i64: -1>, keepdim = false} : (!t) -> tensor<8xf32, #fxmlir.device<"cpu">>
  %3 = fxmlir.aten.sum.dim_IntList %x {dim = array<i64: 0, 1>, keepdim = false} : (!t) -> tensor<f32, #fxmlir.device<"cpu">>
  return %2, %3 : tensor<8xf32, #fxmlir.device<"cpu">>, tensor<f32, #fxmlir.device<"cpu">>
}

// -----

// f64 math would need libdevice on GPUs: only the CPU chain is outlined.
// CHECK-LABEL: func.func @f64_on_cuda
// CHECK: fxmlir.mlir_jit @jit_tanh_erf
// CHECK-NEXT: fxmlir.aten.tanh %{{.*}} : (tensor<8xf64, #fxmlir.device<"cuda:0">>)
// CHECK-NEXT: fxmlir.aten.erf
func.func @f64_on_cuda(%x: tensor<8xf64, #fxmlir.device<"cpu">>, %y: tensor<8xf64, #fxmlir.device<"cuda:0">>) -> (tensor<8xf64, #fxmlir.device<"cpu">>, tensor<8xf64, #fxmlir.device<"cuda:0">>) {
  %0 = fxmlir.aten.tanh %x : (tensor<8xf64, #fxmlir.device<"cpu">>) -> tensor<8xf64, #fxmlir.device<"cpu">>
  %1 = fxmlir.aten.erf %0 : (tensor<8xf64, #fxmlir.device<"cpu">>) -> tensor<8xf64, #fxmlir.device<"cpu">>
  %2 = fxmlir.aten.tanh %y : (tensor<8xf64, #fxmlir.device<"cuda:0">>) -> tensor<8xf64, #fxmlir.device<"cuda:0">>
  %3 = fxmlir.aten.erf %2 : (tensor<8xf64, #fxmlir.device<"cuda:0">>) -> tensor<8xf64, #fxmlir.device<"cuda:0">>
  return %1, %3 : tensor<8xf64, #fxmlir.device<"cpu">>, tensor<8xf64, #fxmlir.device<"cuda:0">>
}

// -----

// With device-types=cpu (mlir_jit's kernels today), a CUDA chain stays as
// it is; the CPU chain beside it is outlined.
// DEVICES-LABEL: func.func @cpu_only
// DEVICES: fxmlir.mlir_jit @jit_add_tanh
// DEVICES-NOT: fxmlir.mlir_jit
// DEVICES: fxmlir.aten.add.Tensor %arg1
// DEVICES-NEXT: fxmlir.aten.tanh
func.func @cpu_only(%x: tensor<8x64xf32, #fxmlir.device<"cpu">>, %y: tensor<8x64xf32, #fxmlir.device<"cuda:0">>)
    -> (tensor<8x64xf32, #fxmlir.device<"cpu">>, tensor<8x64xf32, #fxmlir.device<"cuda:0">>) {
  %0 = fxmlir.aten.add.Tensor %x, %x {alpha = 1 : i64} : (tensor<8x64xf32, #fxmlir.device<"cpu">>, tensor<8x64xf32, #fxmlir.device<"cpu">>) -> tensor<8x64xf32, #fxmlir.device<"cpu">>
  %1 = fxmlir.aten.tanh %0 : (tensor<8x64xf32, #fxmlir.device<"cpu">>) -> tensor<8x64xf32, #fxmlir.device<"cpu">>
  %2 = fxmlir.aten.add.Tensor %y, %y {alpha = 1 : i64} : (tensor<8x64xf32, #fxmlir.device<"cuda:0">>, tensor<8x64xf32, #fxmlir.device<"cuda:0">>) -> tensor<8x64xf32, #fxmlir.device<"cuda:0">>
  %3 = fxmlir.aten.tanh %2 : (tensor<8x64xf32, #fxmlir.device<"cuda:0">>) -> tensor<8x64xf32, #fxmlir.device<"cuda:0">>
  return %1, %3 : tensor<8x64xf32, #fxmlir.device<"cpu">>, tensor<8x64xf32, #fxmlir.device<"cuda:0">>
}

// -----

!t = tensor<8x8xf32, #fxmlir.device<"cpu">>

// Equal regions (the same layer twice) call one function: the JIT compiles
// it once. A region that differs (another constant) gets its own.
// Each call names the nodes its results stand for (their layouts may differ).
// CHECK-LABEL: func.func @equal_regions
// CHECK: %[[FIRST:.*]] = fxmlir.mlir_jit @jit_add_tanh(
// CHECK-SAME: fxmlir.result_nodes = {{\[\["first", 0\]\]}}
// CHECK: fxmlir.mlir_jit @jit_add_tanh(%[[FIRST]]
// CHECK-SAME: fxmlir.result_nodes = {{\[\["second", 0\]\]}}
// CHECK: fxmlir.mlir_jit @jit_add_tanh_0(
// CHECK: func.func private @jit_add_tanh(
// CHECK: func.func private @jit_add_tanh_0(
// CHECK-NOT: func.func private
func.func @equal_regions(%a: !t, %b: !t) -> !t {
  %0 = fxmlir.aten.add.Tensor %a, %b {alpha = 1 : i64} : (!t, !t) -> !t
  %1 = fxmlir.aten.tanh %0 : (!t) -> !t loc("first")
  %2 = fxmlir.aten.mm %1, %b : (!t, !t) -> !t
  %3 = fxmlir.aten.add.Tensor %1, %2 {alpha = 1 : i64} : (!t, !t) -> !t
  %4 = fxmlir.aten.tanh %3 : (!t) -> !t loc("second")
  %5 = fxmlir.aten.mm %4, %b : (!t, !t) -> !t
  %6 = fxmlir.aten.add.Tensor %4, %5 {alpha = 2 : i64} : (!t, !t) -> !t
  %7 = fxmlir.aten.tanh %6 : (!t) -> !t
  return %7 : !t
}

// -----

!q = tensor<2x4x8xf32, #fxmlir.device<"cpu">>
!half = tensor<2x4x4xf32, #fxmlir.device<"cpu">>

// A rotary embedding is one region, its slices and concatenation inside; a
// slice along dim 0 (the rows the runtime splits) stays outside.
// CHECK-LABEL: func.func @rotary
// CHECK-NEXT: %[[ROWS:.*]] = fxmlir.aten.slice.Tensor %{{.*}} {dim = 0 : i64
// CHECK-NEXT: fxmlir.mlir_jit @jit_neg_cat_mul_add(%[[ROWS]], %{{.*}}, %{{.*}})
// CHECK: func.func private @jit_neg_cat_mul_add
// CHECK-COUNT-2: fxmlir.aten.slice.Tensor
// CHECK-NEXT: fxmlir.aten.neg
// CHECK-NEXT: fxmlir.aten.cat
func.func @rotary(%all: tensor<4x4x8xf32, #fxmlir.device<"cpu">>, %cos: !q, %sin: !q) -> !q {
  %x = fxmlir.aten.slice.Tensor %all {dim = 0 : i64, start = 0 : i64, end = 2 : i64, step = 1 : i64} : (tensor<4x4x8xf32, #fxmlir.device<"cpu">>) -> !q
  %x1 = fxmlir.aten.slice.Tensor %x {dim = 2 : i64, start = 0 : i64, end = 4 : i64, step = 1 : i64} : (!q) -> !half
  %x2 = fxmlir.aten.slice.Tensor %x {dim = 2 : i64, start = 4 : i64, end = 8 : i64, step = 1 : i64} : (!q) -> !half
  %n = fxmlir.aten.neg %x2 : (!half) -> !half
  %r = fxmlir.aten.cat [%n, %x1] {dim = -1 : i64} : (!half, !half) -> !q
  %a = fxmlir.aten.mul.Tensor %x, %cos : (!q, !q) -> !q
  %b = fxmlir.aten.mul.Tensor %r, %sin : (!q, !q) -> !q
  %y = fxmlir.aten.add.Tensor %a, %b {alpha = 1 : i64} : (!q, !q) -> !q
  return %y : !q
}

// -----

!t = tensor<8x64xf32, #fxmlir.device<"cpu">>
!w = tensor<64xf32, #fxmlir.device<"cpu">>

// Siblings: two products of one gradient (SwiGLU's backward) share a region
// and its read of %g; products that share only a smaller operand (%w) do
// not, and stay single ops, which no region takes.
// CHECK-LABEL: func.func @siblings
// CHECK-NEXT: %[[R:.*]]:2 = fxmlir.mlir_jit @jit_mul_silu_backward(
// CHECK-NEXT: return %[[R]]#0, %[[R]]#1
// CHECK-LABEL: func.func @weight_readers
// CHECK-NOT: fxmlir.mlir_jit
// CHECK: return
func.func @siblings(%g: !t, %up: !t, %gate: !t, %s: !t) -> (!t, !t) {
  %0 = fxmlir.aten.mul.Tensor %g, %s : (!t, !t) -> !t
  %1 = fxmlir.aten.mul.Tensor %g, %up : (!t, !t) -> !t
  %2 = fxmlir.aten.silu_backward %1, %gate : (!t, !t) -> !t
  return %0, %2 : !t, !t
}

func.func @weight_readers(%a: !t, %b: !t, %w: !w) -> (!t, !t) {
  %0 = fxmlir.aten.mul.Tensor %a, %w : (!t, !w) -> !t
  %1 = fxmlir.aten.mul.Tensor %b, %w : (!t, !w) -> !t
  return %0, %1 : !t, !t
}

// -----

!t = tensor<8x64xf32, #fxmlir.device<"cpu">>
!v = tensor<512xf32, #fxmlir.device<"cpu">>

// A view leaving the region (a detach saved for backward, a reshape) is
// taken after the call from the result for its source, as eager takes it,
// not returned as a second buffer of the same values; the region keeps it
// for its own uses.
// CHECK-LABEL: func.func @views_leave_as_views
// CHECK-SAME: (%[[X:.*]]: tensor<8x64xf32, #fxmlir.device<"cpu">>)
// CHECK-NEXT: %[[R:.*]]:2 = fxmlir.mlir_jit @jit_rsqrt_mul(%[[X]])
// CHECK-NEXT: %[[D:.*]] = fxmlir.aten.detach %[[R]]#1
// CHECK-NEXT: %[[V:.*]] = fxmlir.aten.view %[[R]]#0 {size = array<i64: 512>}
// CHECK-NEXT: return %[[V]], %[[D]]
// CHECK: func.func private @jit_rsqrt_mul({{.*}}) -> (tensor<8x64xf32, #fxmlir.device<"cpu">>, tensor<8x64xf32, #fxmlir.device<"cpu">>)
func.func @views_leave_as_views(%x: !t) -> (!v, !t) {
  %0 = fxmlir.aten.rsqrt %x : (!t) -> !t
  %1 = fxmlir.aten.detach %0 : (!t) -> !t
  %2 = fxmlir.aten.mul.Tensor %1, %x : (!t, !t) -> !t
  %3 = fxmlir.aten.view %2 {size = array<i64: 512>} : (!t) -> !v
  return %3, %1 : !v, !t
}

// -----

!t = tensor<8x64xf32, #fxmlir.device<"cpu">>
!b = tensor<8x64xbf16, #fxmlir.device<"cpu">>

// One result computed element by element from inputs of its shape: the
// region is pointwise, so its result may take a dying input's memory (a
// tied weight's gradient sum, with the LM head's bf16 gradient cast in).
// CHECK-LABEL: func.func @pointwise
// CHECK: fxmlir.mlir_jit @jit_to_copy_add({{.*}}) {fxmlir.pointwise,
func.func @pointwise(%sum: !t, %g: !b) -> !t {
  %0 = fxmlir.aten._to_copy %g {dtype = f32, non_blocking = false} : (!b) -> !t
  %1 = fxmlir.aten.add.Tensor %0, %sum {alpha = 1 : i64} : (!t, !t) -> !t
  return %1 : !t
}

// -----

!t = tensor<8x64xf32, #fxmlir.device<"cpu">>
!b = tensor<8x64xbf16, #fxmlir.device<"cpu">>

// A cast made contiguous is a region's op (its results are contiguous); a
// cast into pinned memory is not (a region's result is not pinned), and
// stays outside, before the region that reads it.
// CHECK-LABEL: func.func @pinned_cast
// CHECK: %[[PINNED:.*]] = fxmlir.aten._to_copy %{{.*}} {dtype = f32, non_blocking = false, pin_memory = true}
// CHECK-NEXT: fxmlir.mlir_jit @jit_to_copy_add_mul(%{{.*}}, %[[PINNED]])
// CHECK: func.func private @jit_to_copy_add_mul
// CHECK: fxmlir.aten._to_copy %{{.*}} {dtype = f32, memory_format = "contiguous_format", non_blocking = false}
func.func @pinned_cast(%g: !b, %h: !b) -> !t {
  %0 = fxmlir.aten._to_copy %g {dtype = f32, memory_format = "contiguous_format", non_blocking = false} : (!b) -> !t
  %1 = fxmlir.aten._to_copy %h {dtype = f32, non_blocking = false, pin_memory = true} : (!b) -> !t
  %2 = fxmlir.aten.add.Tensor %0, %1 {alpha = 1 : i64} : (!t, !t) -> !t
  %3 = fxmlir.aten.mul.Tensor %2, %1 : (!t, !t) -> !t
  return %3 : !t
}

// -----

!t = tensor<8x64xf32, #fxmlir.device<"cpu">>
!r = tensor<64xf32, #fxmlir.device<"cpu">>

// A broadcast operand or a second result: not pointwise.
// CHECK-LABEL: func.func @not_pointwise
// CHECK: fxmlir.mlir_jit @jit_add_tanh({{.*}}) {fxmlir.result_nodes
// CHECK: fxmlir.mlir_jit @jit_sigmoid_mul({{.*}}) {fxmlir.result_nodes
// CHECK-NOT: fxmlir.pointwise
// CHECK: return
func.func @not_pointwise(%x: !t, %bias: !r, %s: tensor<64x64xf32, #fxmlir.device<"cpu">>)
    -> (!t, !t, !t) {
  %0 = fxmlir.aten.add.Tensor %x, %bias {alpha = 1 : i64} : (!t, !r) -> !t
  %1 = fxmlir.aten.tanh %0 : (!t) -> !t
  %2 = fxmlir.aten.mm %1, %s : (!t, tensor<64x64xf32, #fxmlir.device<"cpu">>) -> !t
  %3 = fxmlir.aten.sigmoid %2 : (!t) -> !t
  %4 = fxmlir.aten.mul.Tensor %3, %2 : (!t, !t) -> !t
  %5 = fxmlir.aten.mm %4, %s : (!t, tensor<64x64xf32, #fxmlir.device<"cpu">>) -> !t
  return %1, %3, %5 : !t, !t, !t
}
