// RUN: fxmlir-opt %s --pass-pipeline="builtin.module(func.func(fxmlir-widen-cpu-products{dtypes=bf16,f16}))" --split-input-file | FileCheck %s
// RUN: fxmlir-opt %s --pass-pipeline="builtin.module(func.func(fxmlir-widen-cpu-products{dtypes=f16}))" --split-input-file | FileCheck %s --check-prefix=F16
// RUN: fxmlir-opt %s --fxmlir-widen-cpu-products --split-input-file | FileCheck %s --check-prefix=NONE
// RUN: fxmlir-opt %s --pass-pipeline="builtin.module(fxmlir-forward{widen-product-dtypes=bf16 remove=fxmlir-outline-jit-regions})" --split-input-file | FileCheck %s --check-prefix=STAGE
// RUN: fxmlir-opt %s --pass-pipeline="builtin.module(func.func(fxmlir-widen-cpu-products{dtypes=bf16}),fxmlir-outline-jit-regions{cost-model=true})" --split-input-file | FileCheck %s --check-prefix=OUTLINE
// RUN: fxmlir-opt %s --pass-pipeline="builtin.module(fxmlir-before-autodiff{widen-product-dtypes=bf16})" --split-input-file | FileCheck %s --check-prefix=BEFORE
// RUN: not fxmlir-opt %s --pass-pipeline="builtin.module(func.func(fxmlir-widen-cpu-products{dtypes=f8}))" --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

!x = tensor<256x512xbf16, #fxmlir.device<"cpu">>
!wt = tensor<512x1376xbf16, #fxmlir.device<"cpu">>
!y = tensor<256x1376xbf16, #fxmlir.device<"cpu">>
!b = tensor<1376xbf16, #fxmlir.device<"cpu">>

// A layer's product and, reading the same input, another: each operand is
// cast once, just before the first product that reads it (not where the
// value is made: a float32 copy lives only from its first product to its
// last); the products are float32, their results cast back.
// CHECK-LABEL: func.func @mm_bf16
// CHECK-NEXT: %[[X:.*]] = fxmlir.aten._to_copy %arg0 {dtype = f32, non_blocking = false} : (tensor<256x512xbf16, {{.*}}>) -> tensor<256x512xf32, {{.*}}>
// CHECK-NEXT: %[[W:.*]] = fxmlir.aten._to_copy %arg1 {dtype = f32, non_blocking = false} : (tensor<512x1376xbf16, {{.*}}>) -> tensor<512x1376xf32, {{.*}}>
// CHECK-NEXT: %[[P:.*]] = fxmlir.aten.mm %[[X]], %[[W]] : (tensor<256x512xf32, {{.*}}>, tensor<512x1376xf32, {{.*}}>) -> tensor<256x1376xf32, {{.*}}>
// CHECK-NEXT: %[[R:.*]] = fxmlir.aten._to_copy %[[P]] {dtype = bf16, non_blocking = false} : (tensor<256x1376xf32, {{.*}}>) -> tensor<256x1376xbf16, {{.*}}>
// CHECK-NEXT: %[[B:.*]] = fxmlir.aten._to_copy %arg2 {dtype = f32, non_blocking = false}
// CHECK-NEXT: %[[Q:.*]] = fxmlir.aten.addmm %[[B]], %[[X]], %[[W]] {alpha = 1 : i64, beta = 1 : i64} : {{.*}} -> tensor<256x1376xf32, {{.*}}>
// CHECK: %[[S:.*]] = fxmlir.aten._to_copy %[[Q]] {dtype = bf16, non_blocking = false}
// CHECK-NOT: fxmlir.aten._to_copy
// CHECK: return %[[R]], %[[S]]
// The f16 pass leaves bf16 alone.
// F16-LABEL: func.func @mm_bf16
// F16-NOT: _to_copy
// F16: return
// Without dtypes it leaves products this large alone.
// NONE-LABEL: func.func @mm_bf16
// NONE-NOT: _to_copy
// NONE: return
// The stage pipelines run it after autodiff with the machine's types,
// never before autodiff.
// STAGE-LABEL: func.func @mm_bf16
// STAGE: fxmlir.aten.mm {{.*}} -> tensor<256x1376xf32, {{.*}}>
// BEFORE-LABEL: func.func @mm_bf16
// BEFORE-NOT: _to_copy
// BEFORE: return
// BAD: fxmlir-widen-cpu-products: unknown dtype 'f8'; accepted values: bf16, f16
func.func @mm_bf16(%x: !x, %wt: !wt, %b: !b) -> (!y, !y) {
  %0 = fxmlir.aten.mm %x, %wt : (!x, !wt) -> !y
  %1 = fxmlir.aten.addmm %b, %x, %wt {alpha = 1 : i64, beta = 1 : i64} : (!b, !x, !wt) -> !y
  return %0, %1 : !y, !y
}

// -----

!q = tensor<16x128x64xf16, #fxmlir.device<"cpu">>
!k = tensor<16x64x128xf16, #fxmlir.device<"cpu">>
!s = tensor<16x128x128xf16, #fxmlir.device<"cpu">>

// A batched product in f16.
// CHECK-LABEL: func.func @bmm_f16
// CHECK: fxmlir.aten.bmm {{.*}} -> tensor<16x128x128xf32, {{.*}}>
// CHECK: fxmlir.aten._to_copy {{.*}} {dtype = f16, non_blocking = false}
// F16-LABEL: func.func @bmm_f16
// F16: fxmlir.aten.bmm {{.*}} -> tensor<16x128x128xf32, {{.*}}>
func.func @bmm_f16(%q: !q, %k: !k) -> !s {
  %0 = fxmlir.aten.bmm %q, %k : (!q, !k) -> !s
  return %0 : !s
}

// -----

!x = tensor<256x512xf32, #fxmlir.device<"cpu">>
!w = tensor<512x512xf32, #fxmlir.device<"cpu">>
!xc = tensor<256x512xbf16, #fxmlir.device<"cuda:0">>
!wc = tensor<512x512xbf16, #fxmlir.device<"cuda:0">>

// Float32 products, and 16-bit products on a GPU (cuBLAS has the GEMM),
// are left alone.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: _to_copy
// CHECK: return
func.func @left_alone(%x: !x, %w: !w, %xc: !xc, %wc: !wc) -> (!x, !xc) {
  %0 = fxmlir.aten.mm %x, %w : (!x, !w) -> !x
  %1 = fxmlir.aten.mm %xc, %wc : (!xc, !wc) -> !xc
  return %0, %1 : !x, !xc
}

// -----

!h = tensor<2x8x128x64xbf16, #fxmlir.device<"cpu">>
!l = tensor<2x8x128xf32, #fxmlir.device<"cpu">>
!hf = tensor<2x8x128x64xf32, #fxmlir.device<"cpu">>
!m = tensor<2x8x128x128xbf16, #fxmlir.device<"cpu">>

// Flash attention's backward: its bf16 operands cast (once each), the
// float32 log-sum-exp and the absent mask passed as they are, its three
// gradients cast back. Its forward, a float32 backward and a backward with a
// mask (whose float32 copy would outgrow eager's peak) stay.
// CHECK-LABEL: func.func @attention_backward
// CHECK: fxmlir.aten._scaled_dot_product_flash_attention_for_cpu %arg1, %arg2, %arg3, %{{.*}} -> (tensor<2x8x128x64xbf16, {{.*}}>, tensor<2x8x128xf32, {{.*}}>)
// CHECK-COUNT-5: fxmlir.aten._to_copy %arg{{[0-4]}} {dtype = f32, non_blocking = false}
// CHECK-NEXT: %[[G:.*]], %[[GK:.*]], %[[GV:.*]] = fxmlir.aten._scaled_dot_product_flash_attention_for_cpu_backward {{.*}}, %arg5, %{{.*}} {dropout_p = 0.000000e+00 : f64, is_causal = true} : ({{.*}}) -> (tensor<2x8x128x64xf32, {{.*}}>, tensor<2x8x128x64xf32, {{.*}}>, tensor<2x8x128x64xf32, {{.*}}>)
// CHECK-NEXT: %[[RQ:.*]] = fxmlir.aten._to_copy %[[G]] {dtype = bf16, non_blocking = false}
// CHECK-NEXT: %[[RK:.*]] = fxmlir.aten._to_copy %[[GK]] {dtype = bf16, non_blocking = false}
// CHECK-NEXT: %[[RV:.*]] = fxmlir.aten._to_copy %[[GV]] {dtype = bf16, non_blocking = false}
// CHECK-NEXT: fxmlir.aten._scaled_dot_product_flash_attention_for_cpu_backward {{.*}} -> (tensor<2x8x128x64xf32, {{.*}}>, tensor<2x8x128x64xf32, {{.*}}>, tensor<2x8x128x64xf32, {{.*}}>)
// CHECK-NEXT: fxmlir.aten._scaled_dot_product_flash_attention_for_cpu_backward {{.*}} -> (tensor<2x8x128x64xbf16, {{.*}}>, tensor<2x8x128x64xbf16, {{.*}}>, tensor<2x8x128x64xbf16, {{.*}}>)
// CHECK-NOT: _to_copy
// CHECK: return %[[RQ]], %[[RK]], %[[RV]]
// F16-LABEL: func.func @attention_backward
// F16-NOT: _to_copy
// F16: return
func.func @attention_backward(%g: !h, %q: !h, %k: !h, %v: !h, %o: !h, %lse: !l, %gf: !hf, %mask: !m) -> (!h, !h, !h, !hf, !h, !h) {
  %none = fxmlir.none
  %fwd:2 = fxmlir.aten._scaled_dot_product_flash_attention_for_cpu %q, %k, %v, %none {dropout_p = 0.0 : f64, is_causal = true} : (!h, !h, !h, none) -> (!h, !l)
  %0:3 = fxmlir.aten._scaled_dot_product_flash_attention_for_cpu_backward %g, %q, %k, %v, %o, %lse, %none {dropout_p = 0.0 : f64, is_causal = true} : (!h, !h, !h, !h, !h, !l, none) -> (!h, !h, !h)
  %1:3 = fxmlir.aten._scaled_dot_product_flash_attention_for_cpu_backward %gf, %gf, %gf, %gf, %gf, %lse, %none {dropout_p = 0.0 : f64, is_causal = true} : (!hf, !hf, !hf, !hf, !hf, !l, none) -> (!hf, !hf, !hf)
  %2:3 = fxmlir.aten._scaled_dot_product_flash_attention_for_cpu_backward %g, %q, %k, %v, %o, %lse, %mask {dropout_p = 0.0 : f64, is_causal = false} : (!h, !h, !h, !h, !h, !l, !m) -> (!h, !h, !h)
  return %0#0, %0#1, %0#2, %1#0, %fwd#0, %2#0 : !h, !h, !h, !hf, !h, !h
}

// -----

!a = tensor<32x64xbf16, #fxmlir.device<"cpu">>
!bt = tensor<64x32xbf16, #fxmlir.device<"cpu">>
!c = tensor<32x32xbf16, #fxmlir.device<"cpu">>
!big = tensor<64x64xbf16, #fxmlir.device<"cpu">>
!e = tensor<64x32xbf16, #fxmlir.device<"cpu">>
!p = tensor<2x32x32xf16, #fxmlir.device<"cpu">>
!d = tensor<?x64xbf16, #fxmlir.device<"cpu">>
!dc = tensor<?x32xbf16, #fxmlir.device<"cpu">>
!g = tensor<32x64xbf16, #fxmlir.device<"cuda:0">>
!gt = tensor<64x32xbf16, #fxmlir.device<"cuda:0">>
!gc = tensor<32x32xbf16, #fxmlir.device<"cuda:0">>

// Small products are widened without dtypes too (oneDNN's call costs more
// than a float32 GEMM and its casts): 32 x 64 x 32 = 2^16 multiply-adds, a
// bmm's 2 x 32 x 32 x 32 and an addmm's 2^16. At 2^17 (64 x 64 x 32) still;
// twice that (64 x 64 x 64) is too large, and a dynamic size,
// a float32 product and a GPU's stay.
// NONE-LABEL: func.func @small_products
// NONE: %[[A:.*]] = fxmlir.aten._to_copy %arg0 {dtype = f32, non_blocking = false}
// NONE: %[[B:.*]] = fxmlir.aten._to_copy %arg1 {dtype = f32, non_blocking = false}
// NONE: %[[P:.*]] = fxmlir.aten.mm %[[A]], %[[B]] : {{.*}} -> tensor<32x32xf32, {{.*}}>
// NONE: %[[R:.*]] = fxmlir.aten._to_copy %[[P]] {dtype = bf16, non_blocking = false}
// NONE: fxmlir.aten.bmm {{.*}} -> tensor<2x32x32xf32, {{.*}}>
// NONE: fxmlir.aten.addmm {{.*}} -> tensor<32x32xf32, {{.*}}>
// NONE: fxmlir.aten.mm {{.*}} -> tensor<64x32xf32, {{.*}}>
// NONE: fxmlir.aten.mm {{.*}} : (tensor<64x64xbf16, {{.*}}>, tensor<64x64xbf16, {{.*}}>) -> tensor<64x64xbf16, {{.*}}>
// NONE: fxmlir.aten.mm {{.*}} -> tensor<?x32xbf16, {{.*}}>
// NONE: fxmlir.aten.mm {{.*}} -> tensor<32x32xbf16, #fxmlir.device<"cuda:0">>
// NONE: return %[[R]]
// The dtypes' rule takes all of them on the CPU, dynamic sizes included.
// CHECK-LABEL: func.func @small_products
// CHECK: fxmlir.aten.mm {{.*}} -> tensor<64x64xf32, {{.*}}>
// CHECK: fxmlir.aten.mm {{.*}} -> tensor<?x32xf32, {{.*}}>
// CHECK: fxmlir.aten.mm {{.*}} -> tensor<32x32xbf16, #fxmlir.device<"cuda:0">>
// A stage pipeline widens them after autodiff, never before.
// STAGE-LABEL: func.func @small_products
// STAGE: fxmlir.aten.mm {{.*}} -> tensor<32x32xf32, {{.*}}>
// BEFORE-LABEL: func.func @small_products
// BEFORE-NOT: _to_copy
// BEFORE: return
func.func @small_products(%a: !a, %bt: !bt, %c: !c, %p: !p, %big: !big, %d: !d, %g: !g, %gt: !gt) -> (!c, !p, !c, !e, !big, !dc, !gc) {
  %0 = fxmlir.aten.mm %a, %bt : (!a, !bt) -> !c
  %1 = fxmlir.aten.bmm %p, %p : (!p, !p) -> !p
  %2 = fxmlir.aten.addmm %c, %a, %bt {alpha = 1 : i64, beta = 1 : i64} : (!c, !a, !bt) -> !c
  %e = fxmlir.aten.mm %big, %bt : (!big, !bt) -> !e
  %3 = fxmlir.aten.mm %big, %big : (!big, !big) -> !big
  %4 = fxmlir.aten.mm %d, %bt : (!d, !bt) -> !dc
  %5 = fxmlir.aten.mm %g, %gt : (!g, !gt) -> !gc
  return %0, %1, %2, %e, %3, %4, %5 : !c, !p, !c, !e, !big, !dc, !gc
}

// -----

!w = tensor<32x64xf32, #fxmlir.device<"cpu">>
!wh = tensor<32x64xbf16, #fxmlir.device<"cpu">>
!wt = tensor<64x32xbf16, #fxmlir.device<"cpu">>
!x3 = tensor<1x8x64xbf16, #fxmlir.device<"cpu">>
!x = tensor<8x64xbf16, #fxmlir.device<"cpu">>
!xt = tensor<64x8xbf16, #fxmlir.device<"cpu">>
!y = tensor<8x32xbf16, #fxmlir.device<"cpu">>
!g = tensor<64x64xbf16, #fxmlir.device<"cpu">>
!n = tensor<8x64xbf16, #fxmlir.device<"cpu">>

// A view operand is widened at its source and viewed again: autocast's
// weight cast meets its float32 cast (one region for the outliner), the
// input read as itself and transposed is cast once, and the narrow views
// only the products read are gone. Any other op keeps its own cast, and so
// does a reshape of a transposed value (attention's heads joined again):
// the reshape needs its source's strides, which a copy may not keep.
// CHECK-LABEL: func.func @views
// CHECK-NEXT: %[[W:.*]] = fxmlir.aten._to_copy %arg1 {dtype = bf16, non_blocking = false}
// CHECK-NEXT: %[[XW:.*]] = fxmlir.aten._to_copy %arg0 {dtype = f32, non_blocking = false} : (tensor<1x8x64xbf16, {{.*}}>) -> tensor<1x8x64xf32, {{.*}}>
// CHECK-NEXT: %[[V:.*]] = fxmlir.aten.view %[[XW]] {size = array<i64: 8, 64>} : (tensor<1x8x64xf32, {{.*}}>) -> tensor<8x64xf32, {{.*}}>
// CHECK-NEXT: %[[WW:.*]] = fxmlir.aten._to_copy %[[W]] {dtype = f32, non_blocking = false} : (tensor<32x64xbf16, {{.*}}>) -> tensor<32x64xf32, {{.*}}>
// CHECK-NEXT: %[[T:.*]] = fxmlir.aten.t %[[WW]] : (tensor<32x64xf32, {{.*}}>) -> tensor<64x32xf32, {{.*}}>
// CHECK-NEXT: fxmlir.aten.mm %[[V]], %[[T]] : {{.*}} -> tensor<8x32xf32, {{.*}}>
// CHECK-NEXT: fxmlir.aten._to_copy {{.*}} {dtype = bf16, non_blocking = false}
// CHECK-NEXT: %[[VT:.*]] = fxmlir.aten.t %[[V]] : (tensor<8x64xf32, {{.*}}>) -> tensor<64x8xf32, {{.*}}>
// CHECK-NEXT: fxmlir.aten.mm %[[VT]], %[[V]] : {{.*}} -> tensor<64x64xf32, {{.*}}>
// CHECK-NEXT: fxmlir.aten._to_copy {{.*}} {dtype = bf16, non_blocking = false}
// CHECK-NEXT: %[[N:.*]] = fxmlir.aten.neg %arg0
// CHECK-NEXT: %[[NV:.*]] = fxmlir.aten.view %[[N]]
// CHECK-NEXT: %[[NW:.*]] = fxmlir.aten._to_copy %[[N]] {dtype = f32, non_blocking = false}
// CHECK-NEXT: %[[NWV:.*]] = fxmlir.aten.view %[[NW]]
// CHECK-NEXT: fxmlir.aten.mm %[[NWV]], %[[T]]
// CHECK-NEXT: fxmlir.aten._to_copy
// CHECK-NEXT: %[[HT:.*]] = fxmlir.aten.transpose.int %arg2
// CHECK-NEXT: %[[H:.*]] = fxmlir.aten.view %[[HT]] {size = array<i64: 8, 64>} : (tensor<8x2x32xbf16, {{.*}}>) -> tensor<8x64xbf16, {{.*}}>
// CHECK-NEXT: %[[HW:.*]] = fxmlir.aten._to_copy %[[H]] {dtype = f32, non_blocking = false}
// CHECK-NEXT: fxmlir.aten.mm %[[HW]], %[[T]]
// CHECK-NOT: fxmlir.aten.t
// CHECK: return {{.*}}, %[[W]], %[[NV]]
// The outliner then takes autocast's cast and its float32 copy into one
// region (its cost model keeps it); the transpose stays a view outside.
// OUTLINE-LABEL: func.func @views
// OUTLINE: %[[R:.*]]:2 = fxmlir.mlir_jit @[[F:jit_to_copy[_0-9]*]](%arg1)
// OUTLINE: fxmlir.aten.t %[[R]]#1
// OUTLINE: func.func private @[[F]]
// OUTLINE-NEXT: fxmlir.aten._to_copy %arg0 {dtype = bf16
// OUTLINE-NEXT: fxmlir.aten._to_copy {{.*}} {dtype = f32
func.func @views(%x3: !x3, %w: !w, %heads: tensor<2x8x32xbf16, #fxmlir.device<"cpu">>) -> (!y, !g, !y, !wh, !x, !y) {
  %wh = fxmlir.aten._to_copy %w {dtype = bf16, non_blocking = false} : (!w) -> !wh
  %wt = fxmlir.aten.t %wh : (!wh) -> !wt
  %x = fxmlir.aten.view %x3 {size = array<i64: 8, 64>} : (!x3) -> !x
  %0 = fxmlir.aten.mm %x, %wt : (!x, !wt) -> !y
  %xt = fxmlir.aten.t %x : (!x) -> !xt
  %1 = fxmlir.aten.mm %xt, %x : (!xt, !x) -> !g
  %n3 = fxmlir.aten.neg %x3 : (!x3) -> !x3
  %n = fxmlir.aten.view %n3 {size = array<i64: 8, 64>} : (!x3) -> !n
  %2 = fxmlir.aten.mm %n, %wt : (!n, !wt) -> !y
  %ht = fxmlir.aten.transpose.int %heads {dim0 = 0 : i64, dim1 = 1 : i64} : (tensor<2x8x32xbf16, #fxmlir.device<"cpu">>) -> tensor<8x2x32xbf16, #fxmlir.device<"cpu">>
  %h = fxmlir.aten.view %ht {size = array<i64: 8, 64>} : (tensor<8x2x32xbf16, #fxmlir.device<"cpu">>) -> !x
  %3 = fxmlir.aten.mm %h, %wt : (!x, !wt) -> !y
  return %0, %1, %2, %wh, %n, %3 : !y, !g, !y, !wh, !x, !y
}
