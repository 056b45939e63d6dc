// Regions of graphs compiled for varying shapes have dynamic dims. A slice
// of a [1, 4, ?, 16] transposed tensor has strides computed from the
// dynamic sizes (s * 16): they must reach the LLVM dialect as arithmetic,
// with no affine.apply or unrealized cast left for the translation to
// choke on (it did, and the stage lost all its regions).
//
// RUN: fxmlir-opt %s --fxmlir-jit-cpu | FileCheck %s \
// RUN:   --implicit-check-not=affine. --implicit-check-not=unrealized_conversion_cast
// RUN: fxmlir-opt %s --fxmlir-jit-cpu | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVM
// RUN: fxmlir-opt %s --fxmlir-jit-cuda-host='chip=sm_90 features=+ptx80' | FileCheck %s --check-prefix=HOST \
// RUN:   --implicit-check-not=affine. --implicit-check-not=unrealized_conversion_cast

!x = tensor<1x?x4x16xf32, #fxmlir.device<"cpu">>
!q = tensor<1x4x?x16xf32, #fxmlir.device<"cpu">>
!half = tensor<1x4x?x8xf32, #fxmlir.device<"cpu">>
!c = tensor<1x?x16xf32, #fxmlir.device<"cpu">>
!cu = tensor<1x1x?x16xf32, #fxmlir.device<"cpu">>

// The rotary embedding of an eval step (batch 1, any length): the slices of
// the transposed input are strided views whose strides depend on the length.
// CHECK-LABEL: llvm.func @rotary_dynamic(
// CHECK: llvm.mul
// CHECK: llvm.return
// LLVM: define {{.*}}@rotary_dynamic(
// HOST-LABEL: llvm.func @rotary_dynamic(
func.func private @rotary_dynamic(%h: !x, %cos: !c, %sin: !c) -> !q {
  %x = fxmlir.aten.transpose.int %h {dim0 = 1 : i64, dim1 = 2 : i64} : (!x) -> !q
  %cu = fxmlir.aten.unsqueeze %cos {dim = 1 : i64} : (!c) -> !cu
  %a = fxmlir.aten.mul.Tensor %x, %cu : (!q, !cu) -> !q
  %x2 = fxmlir.aten.slice.Tensor %x {dim = 3 : i64, start = 8 : i64, step = 1 : i64} : (!q) -> !half
  %n = fxmlir.aten.neg %x2 : (!half) -> !half
  %x1 = fxmlir.aten.slice.Tensor %x {dim = 3 : i64, end = 8 : i64, step = 1 : i64} : (!q) -> !half
  %r = fxmlir.aten.cat [%n, %x1] {dim = -1 : i64} : (!half, !half) -> !q
  %su = fxmlir.aten.unsqueeze %sin {dim = 1 : i64} : (!c) -> !cu
  %b = fxmlir.aten.mul.Tensor %r, %su : (!q, !cu) -> !q
  %y = fxmlir.aten.add.Tensor %a, %b {alpha = 1 : i64} : (!q, !q) -> !q
  return %y : !q
}
