// Every op the JIT supports, through every stage of the pipelines: no
// fxmlir op survives linalg, the CPU pipeline ends in the LLVM dialect, the
//
// RUN: fxmlir-opt %s --fxmlir-jit-to-linalg | FileCheck %s --check-prefix=LINALG --implicit-check-not=fxmlir.
// RUN: fxmlir-opt %s --fxmlir-jit-cpu | FileCheck %s --check-prefix=CPU \
// RUN:   --implicit-check-not=linalg. --implicit-check-not=tensor. --implicit-check-not=memref. \
// RUN:   --implicit-check-not=math. --implicit-check-not=arith. --implicit-check-not=scf. \
// RUN:   --implicit-check-not=cf. --implicit-check-not=func.func --implicit-check-not=bufferization.
// RUN: fxmlir-opt %s --fxmlir-jit-cuda | FileCheck %s --check-prefix=CUDA \
// RUN:   --implicit-check-not=__nv_ --implicit-check-not=math. --implicit-check-not=linalg.
// RUN: fxmlir-opt %s --fxmlir-jit-cuda-ptx='chip=sm_90 features=+ptx80' | FileCheck %s --check-prefix=PTX \
// RUN:   --implicit-check-not=.extern --implicit-check-not=gpu.module
// RUN: fxmlir-opt %s --fxmlir-jit-cuda-host='chip=sm_90 features=+ptx80' | FileCheck %s --check-prefix=HOST \
// RUN:   --implicit-check-not=memref. --implicit-check-not=func.func --implicit-check-not=arith. \
// RUN:   --implicit-check-not=gpu.module --implicit-check-not=gpu.alloc --implicit-check-not=gpu.wait

// LINALG-LABEL: func.func private @arith(
// LINALG: linalg.generic
// LINALG-LABEL: func.func private @unary(
// LINALG: linalg.generic
// LINALG-LABEL: func.func private @activations(
// LINALG: linalg.generic
// LINALG-LABEL: func.func private @select(
// LINALG: linalg.generic
// LINALG-LABEL: func.func private @reductions(
// LINALG: linalg.generic
// LINALG-LABEL: func.func private @softmax(
// LINALG: linalg.generic
// LINALG-LABEL: func.func private @layer_norm(
// LINALG: linalg.generic
// LINALG-LABEL: func.func private @more(
// LINALG: linalg.generic
// LINALG-LABEL: func.func private @rotary(
// LINALG: tensor.extract_slice
// LINALG: linalg.generic
// LINALG-LABEL: func.func private @cross_entropy_backward(
// LINALG: linalg.generic

// CPU-LABEL: llvm.func @arith(
// CPU: llvm.return
// CPU-LABEL: llvm.func @unary(
// CPU: llvm.return
// CPU-LABEL: llvm.func @activations(
// CPU: llvm.return
// CPU-LABEL: llvm.func @select(
// bf16 results are stored as their bits (fxmlir-store-half-bits).
// CPU-NOT: llvm.store {{.*}} : bf16
// CPU: llvm.store {{.*}} : i16
// CPU-NOT: llvm.store {{.*}} : bf16
// CPU: llvm.return
// CPU-LABEL: llvm.func @reductions(
// CPU: llvm.return
// CPU-LABEL: llvm.func @softmax(
// CPU: llvm.return
// CPU-LABEL: llvm.func @layer_norm(
// Temporaries come aligned from aligned_alloc, which LLVM knows to return
// distinct memory: with malloc and pointer arithmetic to align, two row
// sums in one loop kept their stores in it.
// CPU-NOT: llvm.call @malloc
// CPU: llvm.call @aligned_alloc
// CPU-NOT: llvm.call @malloc
// CPU: llvm.return
// CPU-LABEL: llvm.func @more(
// CPU: llvm.return
// CPU-LABEL: llvm.func @rotary(
// CPU: llvm.return
// CPU-LABEL: llvm.func @cross_entropy_backward(
// CPU: llvm.return
// CPU-NOT: llvm.func @


// Elementwise kernels read and write 4 x f32 per thread with 16-byte
// accesses (fxmlir-gpu-vectorize-elementwise; 2 x i64 where a kernel reads
// i64), row reductions take a block per row and shuffle
// (fxmlir-gpu-row-reductions); the rest (fills, column reductions, the 4x1
// row statistics) is one thread per element.
// CUDA-LABEL: func.func private @arith(
// CUDA: gpu.launch_func @arith_elementwise::@arith_elementwise blocks in
// CUDA: gpu.module @arith_elementwise [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">]
// CUDA-NEXT: llvm.func @arith_elementwise({{.*}}) attributes {gpu.kernel
// CUDA: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<2xi64>
// CUDA-LABEL: func.func private @unary(
// CUDA: gpu.launch_func @unary_elementwise::@unary_elementwise blocks in
// CUDA: gpu.module @unary_elementwise [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">]
// CUDA-NEXT: llvm.func @unary_elementwise({{.*}}) attributes {gpu.kernel
// CUDA: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// CUDA-LABEL: func.func private @activations(
// CUDA: gpu.launch_func @activations_elementwise::@activations_elementwise blocks in
// CUDA: gpu.module @activations_elementwise [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">]
// CUDA-NEXT: llvm.func @activations_elementwise({{.*}}) attributes {gpu.kernel
// CUDA: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// CUDA-LABEL: func.func private @select(
// CUDA: gpu.launch_func @select_elementwise::@select_elementwise blocks in
// CUDA: gpu.module @select_elementwise [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">]
// CUDA-NEXT: llvm.func @select_elementwise({{.*}}) attributes {gpu.kernel
// CUDA: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// CUDA-LABEL: func.func private @reductions(
// CUDA: gpu.launch_func @reductions_row_reduction::@reductions_row_reduction blocks in
// CUDA: gpu.module @reductions_row_reduction [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">]
// CUDA: llvm.func @reductions_row_reduction({{.*}}) attributes {gpu.kernel
// CUDA: nvvm.shfl.sync bfly
// CUDA-LABEL: func.func private @softmax(
// CUDA: gpu.launch_func @softmax_row_reduction::@softmax_row_reduction blocks in
// CUDA: gpu.module @softmax_row_reduction [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">]
// CUDA: llvm.func @softmax_row_reduction({{.*}}) attributes {gpu.kernel
// CUDA: nvvm.shfl.sync bfly
// CUDA-LABEL: func.func private @layer_norm(
// CUDA: gpu.launch_func @layer_norm_row_reduction::@layer_norm_row_reduction blocks in
// CUDA: gpu.module @layer_norm_row_reduction [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">]
// CUDA: llvm.func @layer_norm_row_reduction({{.*}}) attributes {gpu.kernel
// CUDA: nvvm.shfl.sync bfly
// CUDA-LABEL: func.func private @more(
// CUDA: gpu.launch_func @more_elementwise::@more_elementwise blocks in
// CUDA: gpu.module @more_elementwise [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">]
// CUDA-NEXT: llvm.func @more_elementwise({{.*}}) attributes {gpu.kernel
// CUDA: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>

// PTX: gpu.binary @arith_elementwise [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, {{.*}}assembly = "{{.*}}.target sm_90{{.*}}.visible .entry arith_elementwise({{.*}}ld.global.v2.b64{{.*}}st.global.v2.b64
// PTX: gpu.binary @arith_elementwise_{{[0-9]+}} {{.*}}ld.global.v2.b64
// PTX: gpu.binary @unary_elementwise {{.*}}ld.global.v4.b32{{.*}}st.global.v4.b32
// PTX: gpu.binary @reductions_row_reduction {{.*}}shfl.sync.bfly.b32

// The host side: LLVM dialect but the launches (translated with the PTX
// binaries), temporaries from the mgpu* runtime.
// HOST-LABEL: llvm.func @arith(
// HOST: gpu.launch_func @arith_elementwise::@arith_elementwise
// HOST: gpu.binary @arith_elementwise {{ *}}[#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">
// HOST-LABEL: llvm.func @reductions(
// HOST: llvm.call @mgpuStreamCreate()
// HOST: llvm.call @mgpuMemAlloc(
// HOST: gpu.launch_func @reductions_kernel
// HOST: llvm.call @mgpuMemFree(
// Each of softmax's reductions accumulates into its own buffer
// (fxmlir-private-fills): no copy of a shared fill.
// HOST-LABEL: llvm.func @softmax(
// HOST-NOT: @mgpuMemcpy
// HOST: gpu.launch_func @softmax_row_reduction::@softmax_row_reduction

!f = tensor<4x?xf32, #fxmlir.device<"cpu">>
!h = tensor<4x?xbf16, #fxmlir.device<"cpu">>
!b = tensor<4x?xi1, #fxmlir.device<"cpu">>
!i = tensor<4x?xsi64, #fxmlir.device<"cpu">>
!r = tensor<4x1xf32, #fxmlir.device<"cpu">>
!v = tensor<?xf32, #fxmlir.device<"cpu">>

func.func private @arith(%x: !f, %y: !f, %i: !i) -> (!f, !f, !f, !f, !f, !i, !f) {
  %0 = fxmlir.aten.add.Tensor %x, %y {alpha = 2 : i64} : (!f, !f) -> !f
  %1 = fxmlir.aten.sub.Scalar %0 {other = 1.5 : f64, alpha = 1 : i64} : (!f) -> !f
  %2 = fxmlir.aten.mul.Scalar %1 {other = 3 : i64} : (!f) -> !f
  %3 = fxmlir.aten.div.Tensor %2, %y : (!f, !f) -> !f
  %4 = "fxmlir.call"(%3) {target = "aten::mul.Tensor", args = [#fxmlir.operand<0>, 0.5 : f64], kwargs = {}} : (!f) -> !f
  %5 = "fxmlir.call"(%4) {target = "aten::rsub.Scalar", args = [#fxmlir.operand<0>, 1.0 : f64], kwargs = {}} : (!f) -> !f
  %6 = fxmlir.aten.add.Tensor %i, %i {alpha = 1 : i64} : (!i, !i) -> !i
  %7 = fxmlir.aten.mul.Tensor %x, %i : (!f, !i) -> !f
  %8 = fxmlir.aten.div.Scalar %7 {other = 4 : i64} : (!f) -> !f
  %9 = fxmlir.aten.sub.Tensor %8, %5 {alpha = 1 : i64} : (!f, !f) -> !f
  %10 = fxmlir.aten.neg %9 : (!f) -> !f
  %11 = fxmlir.aten.abs %10 : (!f) -> !f
  return %0, %3, %5, %8, %9, %6, %11 : !f, !f, !f, !f, !f, !i, !f
}

func.func private @unary(%x: !f) -> (!f, !f, !f, !f, !f, !f, !f, !f, !f, !f, !f) {
  %0 = fxmlir.aten.exp %x : (!f) -> !f
  %1 = fxmlir.aten.log %0 : (!f) -> !f
  %2 = fxmlir.aten.sqrt %0 : (!f) -> !f
  %3 = fxmlir.aten.rsqrt %0 : (!f) -> !f
  %4 = fxmlir.aten.reciprocal %0 : (!f) -> !f
  %5 = fxmlir.aten.tanh %x : (!f) -> !f
  %6 = fxmlir.aten.sigmoid %x : (!f) -> !f
  %7 = fxmlir.aten.erf %x : (!f) -> !f
  %8 = fxmlir.aten.relu %x : (!f) -> !f
  %9 = fxmlir.aten.pow.Tensor_Scalar %x {exponent = 3.0 : f64} : (!f) -> !f
  %10 = fxmlir.aten.pow.Tensor_Tensor %0, %x : (!f, !f) -> !f
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10 : !f, !f, !f, !f, !f, !f, !f, !f, !f, !f, !f
}

func.func private @activations(%x: !f, %g: !f) -> (!f, !f, !f, !f, !f, !f, !f, !f, !f) {
  %0 = fxmlir.aten.gelu %x {approximate = "none"} : (!f) -> !f
  %1 = fxmlir.aten.gelu %x {approximate = "tanh"} : (!f) -> !f
  %2 = fxmlir.aten.gelu_backward %g, %x {approximate = "none"} : (!f, !f) -> !f
  %3 = fxmlir.aten.gelu_backward %g, %x {approximate = "tanh"} : (!f, !f) -> !f
  %4 = fxmlir.aten.tanh_backward %g, %x : (!f, !f) -> !f
  %5 = fxmlir.aten.sigmoid_backward %g, %x : (!f, !f) -> !f
  %6 = fxmlir.aten.threshold_backward %g, %x {threshold = 0 : i64} : (!f, !f) -> !f
  %7 = fxmlir.aten.silu %x : (!f) -> !f
  %8 = fxmlir.aten.silu_backward %g, %x : (!f, !f) -> !f
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : !f, !f, !f, !f, !f, !f, !f, !f, !f
}

func.func private @select(%x: !f, %y: !f, %h: !h, %i: !i) -> (!b, !b, !f, !f, !h, !f, !i, !h) {
  %0 = fxmlir.aten.gt.Tensor %x, %y : (!f, !f) -> !b
  %1 = fxmlir.aten.le.Scalar %i {other = 2.5 : f64} : (!i) -> !b
  %2 = fxmlir.aten.where.self %0, %x, %y : (!b, !f, !f) -> !f
  %3 = fxmlir.aten.masked_fill.Scalar %x, %1 {value = -1.0e+09 : f64} : (!f, !b) -> !f
  %4 = fxmlir.aten._to_copy %x {dtype = bf16, non_blocking = false} : (!f) -> !h
  %5 = fxmlir.aten._to_copy %h {dtype = f32, non_blocking = false} : (!h) -> !f
  %6 = fxmlir.aten._to_copy %x {dtype = si64, non_blocking = false} : (!f) -> !i
  %7 = fxmlir.aten.mul.Tensor %h, %h : (!h, !h) -> !h
  %8 = fxmlir.aten.eq.Scalar %h {other = 0 : i64} : (!h) -> !b
  %9 = fxmlir.aten.ne.Tensor %i, %i : (!i, !i) -> !b
  %10 = fxmlir.aten.lt.Scalar %x {other = 0.0 : f64} : (!f) -> !b
  %11 = fxmlir.aten.ge.Tensor %x, %y : (!f, !f) -> !b
  return %0, %1, %2, %3, %4, %5, %6, %7 : !b, !b, !f, !f, !h, !f, !i, !h
}

func.func private @reductions(%x: !f, %h: !h) -> (!r, !v, tensor<4xf32, #fxmlir.device<"cpu">>, !r, !r, !r, tensor<4x1xbf16, #fxmlir.device<"cpu">>) {
  %0 = fxmlir.aten.sum.dim_IntList %x {dim = array<i64: -1>, keepdim = true} : (!f) -> !r
  %1 = fxmlir.aten.sum.dim_IntList %x {dim = array<i64: 0>, keepdim = false} : (!f) -> !v
  %2 = fxmlir.aten.mean.dim %x {dim = array<i64: 1>, keepdim = false} : (!f) -> tensor<4xf32, #fxmlir.device<"cpu">>
  %3 = fxmlir.aten.amax %x {dim = array<i64: -1>, keepdim = true} : (!f) -> !r
  %4:2 = fxmlir.aten.var_mean.correction %x {dim = array<i64: -1>, correction = 1 : i64, keepdim = true} : (!f) -> (!r, !r)
  %5 = fxmlir.aten.amax %h {dim = array<i64: -1>, keepdim = true} : (!h) -> tensor<4x1xbf16, #fxmlir.device<"cpu">>
  return %0, %1, %2, %3, %4#0, %4#1, %5 : !r, !v, tensor<4xf32, #fxmlir.device<"cpu">>, !r, !r, !r, tensor<4x1xbf16, #fxmlir.device<"cpu">>
}

func.func private @softmax(%x: !f, %g: !f, %h: !h) -> (!f, !f, !f, !f, !h, !f) {
  %0 = fxmlir.aten._softmax %x {dim = -1 : i64, half_to_float = false} : (!f) -> !f
  %1 = fxmlir.aten._log_softmax %x {dim = 1 : i64, half_to_float = false} : (!f) -> !f
  %2 = fxmlir.aten._softmax_backward_data %g, %0 {dim = -1 : i64, input_dtype = f32} : (!f, !f) -> !f
  %3 = fxmlir.aten._log_softmax_backward_data %g, %1 {dim = -1 : i64, input_dtype = f32} : (!f, !f) -> !f
  %4 = fxmlir.aten._softmax %h {dim = -1 : i64, half_to_float = false} : (!h) -> !h
  %5 = fxmlir.aten._softmax %h {dim = -1 : i64, half_to_float = true} : (!h) -> !f
  return %0, %1, %2, %3, %4, %5 : !f, !f, !f, !f, !h, !f
}

func.func private @layer_norm(%x: tensor<4x16xf32, #fxmlir.device<"cpu">>, %w: tensor<16xf32, #fxmlir.device<"cpu">>, %b: tensor<16xf32, #fxmlir.device<"cpu">>, %g: tensor<4x16xf32, #fxmlir.device<"cpu">>) -> (tensor<4x16xf32, #fxmlir.device<"cpu">>, tensor<4x1xf32, #fxmlir.device<"cpu">>, tensor<4x1xf32, #fxmlir.device<"cpu">>, tensor<4x16xf32, #fxmlir.device<"cpu">>, tensor<16xf32, #fxmlir.device<"cpu">>, tensor<16xf32, #fxmlir.device<"cpu">>, tensor<4x16xf32, #fxmlir.device<"cpu">>) {
  %0:3 = fxmlir.aten.native_layer_norm %x, %w, %b {normalized_shape = array<i64: 16>, eps = 1.0e-05 : f64} : (tensor<4x16xf32, #fxmlir.device<"cpu">>, tensor<16xf32, #fxmlir.device<"cpu">>, tensor<16xf32, #fxmlir.device<"cpu">>) -> (tensor<4x16xf32, #fxmlir.device<"cpu">>, tensor<4x1xf32, #fxmlir.device<"cpu">>, tensor<4x1xf32, #fxmlir.device<"cpu">>)
  %1:3 = fxmlir.aten.native_layer_norm_backward %g, %x, %0#1, %0#2, %w, %b {normalized_shape = array<i64: 16>, output_mask = array<i1: true, true, true>} : (tensor<4x16xf32, #fxmlir.device<"cpu">>, tensor<4x16xf32, #fxmlir.device<"cpu">>, tensor<4x1xf32, #fxmlir.device<"cpu">>, tensor<4x1xf32, #fxmlir.device<"cpu">>, tensor<16xf32, #fxmlir.device<"cpu">>, tensor<16xf32, #fxmlir.device<"cpu">>) -> (tensor<4x16xf32, #fxmlir.device<"cpu">>, tensor<16xf32, #fxmlir.device<"cpu">>, tensor<16xf32, #fxmlir.device<"cpu">>)
  %none = fxmlir.none
  %2:3 = fxmlir.aten.native_layer_norm %x, %none, %none {normalized_shape = array<i64: 16>, eps = 1.0e-05 : f64} : (tensor<4x16xf32, #fxmlir.device<"cpu">>, none, none) -> (tensor<4x16xf32, #fxmlir.device<"cpu">>, tensor<4x1xf32, #fxmlir.device<"cpu">>, tensor<4x1xf32, #fxmlir.device<"cpu">>)
  return %0#0, %0#1, %0#2, %1#0, %1#1, %1#2, %2#0 : tensor<4x16xf32, #fxmlir.device<"cpu">>, tensor<4x1xf32, #fxmlir.device<"cpu">>, tensor<4x1xf32, #fxmlir.device<"cpu">>, tensor<4x16xf32, #fxmlir.device<"cpu">>, tensor<16xf32, #fxmlir.device<"cpu">>, tensor<16xf32, #fxmlir.device<"cpu">>, tensor<4x16xf32, #fxmlir.device<"cpu">>
}

func.func private @more(%x: !f, %m: !b, %s: tensor<f32, #fxmlir.device<"cpu">>) -> (!f, !f, !b, !f, !f) {
  %0 = fxmlir.aten.detach %x : (!f) -> !f
  %1 = fxmlir.aten.alias %0 : (!f) -> !f
  %2 = fxmlir.aten.add.Scalar %1 {other = 1.0 : f64, alpha = 1 : i64} : (!f) -> !f
  %3 = fxmlir.aten.masked_fill.Tensor %2, %m, %s : (!f, !b, tensor<f32, #fxmlir.device<"cpu">>) -> !f
  %4 = "fxmlir.call"(%3) {target = "aten::add.Tensor", args = [#fxmlir.operand<0>, 2 : i64], kwargs = {alpha = 3 : i64}} : (!f) -> !f
  %5 = "fxmlir.call"(%4) {target = "aten::sub.Tensor", args = [1.0 : f64, #fxmlir.operand<0>], kwargs = {}} : (!f) -> !f
  %6 = "fxmlir.call"(%5) {target = "aten::div.Tensor", args = [#fxmlir.operand<0>, 3.0 : f64], kwargs = {}} : (!f) -> !f
  %9 = fxmlir.aten.eq.Tensor %6, %x : (!f, !f) -> !b
  %10 = fxmlir.aten.gt.Scalar %6 {other = 0.5 : f64} : (!f) -> !b
  %11 = fxmlir.aten.where.self %10, %6, %x : (!b, !f, !f) -> !f
  %12 = fxmlir.aten.scalar_tensor {s = 0 : i64, dtype = f32} : () -> tensor<f32, #fxmlir.device<"cpu">>
  %13 = fxmlir.aten.where.self %9, %12, %11 : (!b, tensor<f32, #fxmlir.device<"cpu">>, !f) -> !f
  %14 = fxmlir.aten.unsqueeze %13 {dim = 1 : i64} : (!f) -> tensor<4x1x?xf32, #fxmlir.device<"cpu">>
  %15 = fxmlir.aten.squeeze.dim %14 {dim = 1 : i64} : (tensor<4x1x?xf32, #fxmlir.device<"cpu">>) -> !f
  %16 = fxmlir.aten.view %15 {size = array<i64: 4, 1, -1>} : (!f) -> tensor<4x1x?xf32, #fxmlir.device<"cpu">>
  %17 = fxmlir.aten._unsafe_view %16 {size = array<i64: 4, -1>} : (tensor<4x1x?xf32, #fxmlir.device<"cpu">>) -> !f
  %18 = fxmlir.aten.squeeze.dims %14 {dim = array<i64: 1>} : (tensor<4x1x?xf32, #fxmlir.device<"cpu">>) -> !f
  return %1, %6, %9, %17, %18 : !f, !f, !b, !f, !f
}

// Rotary embeddings forward and backward, and a head transpose: slices,
// concatenation, slice_backward, transpose and clone inside one region.
!q = tensor<2x4x8xf32, #fxmlir.device<"cpu">>
!c = tensor<1x4x8xf32, #fxmlir.device<"cpu">>
!half = tensor<2x4x4xf32, #fxmlir.device<"cpu">>
func.func private @rotary(%x: !q, %cos: !c, %sin: !c, %g: !q) -> (!q, tensor<2x8x4xf32, #fxmlir.device<"cpu">>, !q) {
  %x1 = fxmlir.aten.slice.Tensor %x {dim = -1 : i64, start = 0 : i64, end = 4 : i64, step = 1 : i64} : (!q) -> !half
  %x2 = fxmlir.aten.slice.Tensor %x {dim = 2 : i64, start = 4 : i64, end = 9223372036854775807 : i64, step = 1 : i64} : (!q) -> !half
  %n = fxmlir.aten.neg %x2 : (!half) -> !half
  %r = fxmlir.aten.cat [%n, %x1] {dim = -1 : i64} : (!half, !half) -> !q
  %a = fxmlir.aten.mul.Tensor %x, %cos : (!q, !c) -> !q
  %b = fxmlir.aten.mul.Tensor %r, %sin : (!q, !c) -> !q
  %y = fxmlir.aten.add.Tensor %a, %b {alpha = 1 : i64} : (!q, !q) -> !q
  %t = fxmlir.aten.transpose.int %y {dim0 = 1 : i64, dim1 = 2 : i64} : (!q) -> tensor<2x8x4xf32, #fxmlir.device<"cpu">>
  %c = fxmlir.aten.clone %t {memory_format = "contiguous_format"} : (tensor<2x8x4xf32, #fxmlir.device<"cpu">>) -> tensor<2x8x4xf32, #fxmlir.device<"cpu">>
  %gs = fxmlir.aten.mul.Tensor %g, %sin : (!q, !c) -> !q
  %g1 = fxmlir.aten.slice.Tensor %gs {dim = 2 : i64, start = 0 : i64, end = 4 : i64, step = 1 : i64} : (!q) -> !half
  %g2 = fxmlir.aten.slice.Tensor %gs {dim = 2 : i64, start = 4 : i64, end = 8 : i64, step = 1 : i64} : (!q) -> !half
  %ng = fxmlir.aten.neg %g1 : (!half) -> !half
  %b1 = "fxmlir.call"(%ng) {target = "aten::slice_backward.default", args = [#fxmlir.operand<0>, [2, 4, 8], 2, 4, 9223372036854775807, 1], kwargs = {}} : (!half) -> !q
  %b2 = "fxmlir.call"(%g2) {target = "aten::slice_backward.default", args = [#fxmlir.operand<0>, [2, 4, 8], 2, 0, 4, 1], kwargs = {}} : (!half) -> !q
  %gc = fxmlir.aten.mul.Tensor %g, %cos : (!q, !c) -> !q
  %s = fxmlir.aten.add.Tensor %b1, %b2 {alpha = 1 : i64} : (!q, !q) -> !q
  %dx = fxmlir.aten.add.Tensor %s, %gc {alpha = 1 : i64} : (!q, !q) -> !q
  return %y, %c, %dx : !q, tensor<2x8x4xf32, #fxmlir.device<"cpu">>, !q
}

// Cross-entropy's backward: the loss gradient at each row's target, then
// log-softmax's gradient.
func.func private @cross_entropy_backward(%g: tensor<f32, #fxmlir.device<"cpu">>, %y: tensor<6x10xf32, #fxmlir.device<"cpu">>, %t: tensor<6xsi64, #fxmlir.device<"cpu">>, %w: tensor<f32, #fxmlir.device<"cpu">>) -> tensor<6x10xf32, #fxmlir.device<"cpu">> {
  %none = fxmlir.none
  %0 = fxmlir.aten.nll_loss_backward %g, %y, %t, %none, %w {reduction = 1 : i64, ignore_index = -100 : i64} : (tensor<f32, #fxmlir.device<"cpu">>, tensor<6x10xf32, #fxmlir.device<"cpu">>, tensor<6xsi64, #fxmlir.device<"cpu">>, none, tensor<f32, #fxmlir.device<"cpu">>) -> tensor<6x10xf32, #fxmlir.device<"cpu">>
  %1 = fxmlir.aten._log_softmax_backward_data %0, %y {dim = 1 : i64, input_dtype = f32} : (tensor<6x10xf32, #fxmlir.device<"cpu">>, tensor<6x10xf32, #fxmlir.device<"cpu">>) -> tensor<6x10xf32, #fxmlir.device<"cpu">>
  return %1 : tensor<6x10xf32, #fxmlir.device<"cpu">>
}
