// RUN: fxmlir-opt %s --fxmlir-convert-to-linalg --split-input-file | FileCheck %s

// Torch broadcasting: size-1 dims read index 0, missing leading dims are not
// indexed. Encodings go; alpha scales the second operand in one fma, as
// torch's kernels do (inf + 2 * -max is inf, not NaN).
// CHECK-DAG: #[[STRETCH:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[TRAILING:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func private @broadcast
// CHECK-SAME: (%{{.*}}: tensor<4x1xf32>, %{{.*}}: tensor<8xf32>) -> tensor<4x8xf32>
// CHECK: linalg.generic {indexing_maps = [#[[STRETCH]], #[[TRAILING]], #{{.*}}], iterator_types = ["parallel", "parallel"]}
// CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: math.fma %[[B]], %[[TWO]], %[[A]] : f32
// CHECK-NOT: arith.mulf
func.func private @broadcast(%a: tensor<4x1xf32, #fxmlir.device<"cpu">>, %b: tensor<8xf32, #fxmlir.device<"cpu">>) -> tensor<4x8xf32, #fxmlir.device<"cpu">> {
  %0 = fxmlir.aten.add.Tensor %a, %b {alpha = 2 : i64} : (tensor<4x1xf32, #fxmlir.device<"cpu">>, tensor<8xf32, #fxmlir.device<"cpu">>) -> tensor<4x8xf32, #fxmlir.device<"cpu">>
  return %0 : tensor<4x8xf32, #fxmlir.device<"cpu">>
}

// -----

// Dynamic dims come from the inputs; int64 is promoted to the float result.
// CHECK-LABEL: func.func private @dynamic
// CHECK-SAME: (%[[A:.*]]: tensor<?x?xi64>, %{{.*}}: tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK-DAG: %[[D0:.*]] = tensor.dim %[[A]], %c0
// CHECK-DAG: %[[D1:.*]] = tensor.dim %[[A]], %c1
// CHECK: tensor.empty(%[[D0]], %[[D1]]) : tensor<?x?xf32>
// CHECK: ^bb0(%[[I:.*]]: i64, %[[F:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[CAST:.*]] = arith.sitofp %[[I]] : i64 to f32
// CHECK-NEXT: arith.mulf %[[CAST]], %[[F]]
func.func private @dynamic(%a: tensor<?x?xsi64, #fxmlir.device<"cpu">>, %b: tensor<?x?xf32, #fxmlir.device<"cpu">>) -> tensor<?x?xf32, #fxmlir.device<"cpu">> {
  %0 = fxmlir.aten.mul.Tensor %a, %b : (tensor<?x?xsi64, #fxmlir.device<"cpu">>, tensor<?x?xf32, #fxmlir.device<"cpu">>) -> tensor<?x?xf32, #fxmlir.device<"cpu">>
  return %0 : tensor<?x?xf32, #fxmlir.device<"cpu">>
}

// -----

// bf16 math runs in f32 and rounds after each op, as eager does; a Python
// scalar keeps its f32 value.
// CHECK-LABEL: func.func private @bf16
// CHECK: ^bb0(%[[X:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT: %[[WIDE:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK-NEXT: %[[T:.*]] = math.tanh %[[WIDE]] : f32
// CHECK-NEXT: arith.truncf %[[T]] : f32 to bf16
// CHECK: arith.extf
// CHECK: arith.constant 1.000000e-01 : f32
// CHECK: arith.mulf
// CHECK: arith.truncf
func.func private @bf16(%a: tensor<8xbf16, #fxmlir.device<"cuda:0">>) -> tensor<8xbf16, #fxmlir.device<"cuda:0">> {
  %0 = fxmlir.aten.tanh %a : (tensor<8xbf16, #fxmlir.device<"cuda:0">>) -> tensor<8xbf16, #fxmlir.device<"cuda:0">>
  %1 = "fxmlir.call"(%0) {target = "aten::mul.Tensor", args = [#fxmlir.operand<0>, 0.1 : f64], kwargs = {}} : (tensor<8xbf16, #fxmlir.device<"cuda:0">>) -> tensor<8xbf16, #fxmlir.device<"cuda:0">>
  return %1 : tensor<8xbf16, #fxmlir.device<"cuda:0">>
}

// -----

// ne is unordered (NaN != 0); masked_fill selects the scalar where the mask
// is set.
// CHECK-LABEL: func.func private @select
// CHECK: arith.cmpf une, %{{.*}}, %{{.*}} : f32
// CHECK: ^bb0(%[[X:.*]]: f32, %[[M:.*]]: i1, %{{.*}}: f32):
// CHECK-NEXT: %[[FILL:.*]] = arith.constant -3.000000e+38 : f32
// CHECK-NEXT: arith.select %[[M]], %[[FILL]], %[[X]] : f32
func.func private @select(%x: tensor<8xf32, #fxmlir.device<"cpu">>, %m: tensor<8xi1, #fxmlir.device<"cpu">>) -> (tensor<8xi1, #fxmlir.device<"cpu">>, tensor<8xf32, #fxmlir.device<"cpu">>) {
  %0 = fxmlir.aten.ne.Scalar %x {other = 0 : i64} : (tensor<8xf32, #fxmlir.device<"cpu">>) -> tensor<8xi1, #fxmlir.device<"cpu">>
  %1 = fxmlir.aten.masked_fill.Scalar %x, %m {value = -3.0e+38 : f64} : (tensor<8xf32, #fxmlir.device<"cpu">>, tensor<8xi1, #fxmlir.device<"cpu">>) -> tensor<8xf32, #fxmlir.device<"cpu">>
  return %0, %1 : tensor<8xi1, #fxmlir.device<"cpu">>, tensor<8xf32, #fxmlir.device<"cpu">>
}

// -----

// A bf16 row sum accumulates in f32 (reassociable, so it vectorizes), keeps
// the reduced dim as size 1 and rounds once.
// CHECK-LABEL: func.func private @row_sum
// CHECK: %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<?x16xbf16>) outs(%[[INIT]] : tensor<?xf32>)
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
// CHECK: %[[KEPT:.*]] = tensor.expand_shape %[[SUM]] {{\[\[}}0, 1]]
// CHECK: linalg.generic {{.*}} ins(%[[KEPT]] : tensor<?x1xf32>) outs(%{{.*}} : tensor<?x1xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func private @row_sum(%x: tensor<?x16xbf16, #fxmlir.device<"cpu">>) -> tensor<?x1xbf16, #fxmlir.device<"cpu">> {
  %0 = fxmlir.aten.sum.dim_IntList %x {dim = array<i64: -1>, keepdim = true} : (tensor<?x16xbf16, #fxmlir.device<"cpu">>) -> tensor<?x1xbf16, #fxmlir.device<"cpu">>
  return %0 : tensor<?x1xbf16, #fxmlir.device<"cpu">>
}

// -----

// Softmax: the max (which may ignore NaN, as maxnumf vectorizes: a NaN
// still makes every exp(x - max) of its row NaN), exp(x - max) once, its
// sum, the inverse once per row, then the product.
// CHECK-LABEL: func.func private @softmax
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.maxnumf
// CHECK: %[[EXP:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[EXP]]
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<4x1xf32>) outs(%{{.*}} : tensor<4x1xf32>)
// CHECK: arith.divf
// CHECK: linalg.generic {{.*}} ins(%[[EXP]], %{{.*}} : tensor<4x16xf32>, tensor<4x1xf32>)
// CHECK: arith.mulf
func.func private @softmax(%x: tensor<4x16xf32, #fxmlir.device<"cpu">>) -> tensor<4x16xf32, #fxmlir.device<"cpu">> {
  %0 = fxmlir.aten._softmax %x {dim = -1 : i64, half_to_float = false} : (tensor<4x16xf32, #fxmlir.device<"cpu">>) -> tensor<4x16xf32, #fxmlir.device<"cpu">>
  return %0 : tensor<4x16xf32, #fxmlir.device<"cpu">>
}

// -----

// The arguments may be respecialized: shapes follow them, not the types the
// graph recorded (here 4x16 recorded, dims left dynamic by the caller).
// CHECK-LABEL: func.func private @respecialized
// CHECK-SAME: (%{{.*}}: tensor<?x16xf32>) -> tensor<?x16xf32>
func.func private @respecialized(%x: tensor<?x16xf32, #fxmlir.device<"cpu">>) -> tensor<4x16xf32, #fxmlir.device<"cpu">> {
  %0 = fxmlir.aten.exp %x : (tensor<?x16xf32, #fxmlir.device<"cpu">>) -> tensor<4x16xf32, #fxmlir.device<"cpu">>
  return %0 : tensor<4x16xf32, #fxmlir.device<"cpu">>
}

// -----

// Views that only drop or add size-1 dims (a keepdim bias gradient viewed
// as 1-D) are collapse/expand_shape; scalar_tensor is a constant.
// CHECK-LABEL: func.func private @unit_dim_views
// CHECK-SAME: (%[[X:.*]]: tensor<1x?xf32>)
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1]] : tensor<1x?xf32> into tensor<?xf32>
// CHECK: tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1]] {{.*}} into tensor<?x1xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1, 2]] output_shape [%{{.*}}, 1, 1] : tensor<?xf32> into tensor<?x1x1xf32>
// CHECK: %[[ZERO:.*]] = tensor.from_elements %{{.*}} : tensor<f32>
// CHECK: linalg.generic {{.*}} ins(%[[FLAT]], %[[ZERO]] : tensor<?xf32>, tensor<f32>)
func.func private @unit_dim_views(%x: tensor<1x?xf32, #fxmlir.device<"cpu">>) -> (tensor<?x1x1xf32, #fxmlir.device<"cpu">>, tensor<?xf32, #fxmlir.device<"cpu">>) {
  %0 = fxmlir.aten.view %x {size = array<i64: -1>} : (tensor<1x?xf32, #fxmlir.device<"cpu">>) -> tensor<?xf32, #fxmlir.device<"cpu">>
  %1 = fxmlir.aten.unsqueeze %0 {dim = 1 : i64} : (tensor<?xf32, #fxmlir.device<"cpu">>) -> tensor<?x1xf32, #fxmlir.device<"cpu">>
  %2 = fxmlir.aten.unsqueeze %1 {dim = 2 : i64} : (tensor<?x1xf32, #fxmlir.device<"cpu">>) -> tensor<?x1x1xf32, #fxmlir.device<"cpu">>
  %3 = fxmlir.aten.scalar_tensor {s = 0 : i64, dtype = f32} : () -> tensor<f32, #fxmlir.device<"cpu">>
  %4 = fxmlir.aten.add.Tensor %0, %3 {alpha = 1 : i64} : (tensor<?xf32, #fxmlir.device<"cpu">>, tensor<f32, #fxmlir.device<"cpu">>) -> tensor<?xf32, #fxmlir.device<"cpu">>
  return %2, %4 : tensor<?x1x1xf32, #fxmlir.device<"cpu">>, tensor<?xf32, #fxmlir.device<"cpu">>
}

// -----

// pow is C's pow, as torch's: |x|^y through exp and log, negated for a
// negative x (-0 too) and an odd y, NaN for a finite negative x and a
// non-integral y, 1 for x^0, 1^y and (-1)^+-inf. No math.powf, whose
// expansion gives NaN for every negative base and for 0^0.
// CHECK-LABEL: func.func private @pow_tensor
// CHECK-NOT: math.powf
// CHECK: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[ABS:.*]] = math.absf %[[X]]
// CHECK-DAG: %[[LOG:.*]] = math.log %[[ABS]]
// CHECK-DAG: %[[PROD:.*]] = arith.mulf %[[Y]], %[[LOG]]
// CHECK-DAG: %[[POW:.*]] = math.exp %[[PROD]]
// CHECK-DAG: %[[FLOOR:.*]] = math.floor %[[Y]]
// CHECK-DAG: %[[INTEGRAL:.*]] = arith.cmpf oeq, %[[FLOOR]], %[[Y]]
// CHECK-DAG: %[[SIGN:.*]] = math.copysign %[[ONE]], %[[X]]
// CHECK-DAG: %[[NEGATED:.*]] = arith.negf %[[POW]]
// CHECK: %[[SIGNED:.*]] = arith.select %{{.*}}, %[[NEGATED]], %[[POW]]
// CHECK: %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK: %[[REAL:.*]] = arith.select %{{.*}}, %[[NAN]], %[[SIGNED]]
// CHECK: %[[UNIT:.*]] = arith.cmpf oeq, %[[X]], %[[ONE]]
// CHECK: arith.select %{{.*}}, %[[ONE]], %[[REAL]]
// CHECK-NOT: math.powf
func.func private @pow_tensor(%x: tensor<8xf32, #fxmlir.device<"cpu">>, %y: tensor<8xf32, #fxmlir.device<"cpu">>) -> tensor<8xf32, #fxmlir.device<"cpu">> {
  %0 = fxmlir.aten.pow.Tensor_Tensor %x, %y : (tensor<8xf32, #fxmlir.device<"cpu">>, tensor<8xf32, #fxmlir.device<"cpu">>) -> tensor<8xf32, #fxmlir.device<"cpu">>
  return %0 : tensor<8xf32, #fxmlir.device<"cpu">>
}

// -----

// A small integral exponent multiplies (exact, signed for a negative base);
// another goes through pow's special cases with a constant exponent.
// CHECK-LABEL: func.func private @pow_scalar
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[SQUARE:.*]] = arith.mulf %[[X]], %[[X]]
// CHECK-NEXT: %[[CUBE:.*]] = arith.mulf %[[SQUARE]], %[[X]]
// CHECK-NEXT: linalg.yield %[[CUBE]]
// CHECK: ^bb0(%[[Z:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[E:.*]] = arith.constant 2.500000e+00 : f32
// CHECK: math.absf %[[Z]]
// CHECK: math.floor %[[E]]
// CHECK: math.copysign
// CHECK-NOT: math.powf
func.func private @pow_scalar(%x: tensor<8xf32, #fxmlir.device<"cpu">>) -> (tensor<8xf32, #fxmlir.device<"cpu">>, tensor<8xf32, #fxmlir.device<"cpu">>) {
  %0 = fxmlir.aten.pow.Tensor_Scalar %x {exponent = 3.0 : f64} : (tensor<8xf32, #fxmlir.device<"cpu">>) -> tensor<8xf32, #fxmlir.device<"cpu">>
  %1 = fxmlir.aten.pow.Tensor_Scalar %0 {exponent = 2.5 : f64} : (tensor<8xf32, #fxmlir.device<"cpu">>) -> tensor<8xf32, #fxmlir.device<"cpu">>
  return %0, %1 : tensor<8xf32, #fxmlir.device<"cpu">>, tensor<8xf32, #fxmlir.device<"cpu">>
}

// -----

// Variance in two passes: the mean is each row's first element plus the
// mean of the differences from it (exact on constant rows), then the sum of
// squared deviations from that mean.
// CHECK-LABEL: func.func private @var_mean
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32>)
// CHECK: %[[FIRST:.*]] = tensor.extract_slice %[[X]][0, 0] [4, 1] [1, 1] : tensor<4x16xf32> to tensor<4x1xf32>
// CHECK: %[[SHIFTED:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[FIRST]] : tensor<4x16xf32>, tensor<4x1xf32>)
// CHECK: ^bb0(%[[V:.*]]: f32, %[[K:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[V]], %[[K]]
// CHECK-NEXT: arith.addf %[[D]], %[[ACC]] fastmath<reassoc>
// CHECK: %[[SUM:.*]] = tensor.expand_shape %[[SHIFTED]]
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[SUM]], %[[FIRST]] : tensor<4x1xf32>, tensor<4x1xf32>)
// CHECK: ^bb0(%[[S:.*]]: f32, %[[K2:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[SHIFT:.*]] = arith.divf %[[S]], %{{.*}}
// CHECK-NEXT: arith.addf %[[K2]], %[[SHIFT]]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[MEAN]] : tensor<4x16xf32>, tensor<4x1xf32>)
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.addf
func.func private @var_mean(%x: tensor<4x16xf32, #fxmlir.device<"cpu">>) -> (tensor<4xf32, #fxmlir.device<"cpu">>, tensor<4xf32, #fxmlir.device<"cpu">>) {
  %0:2 = fxmlir.aten.var_mean.correction %x {dim = array<i64: -1>, correction = 1 : i64, keepdim = false} : (tensor<4x16xf32, #fxmlir.device<"cpu">>) -> (tensor<4xf32, #fxmlir.device<"cpu">>, tensor<4xf32, #fxmlir.device<"cpu">>)
  return %0#0, %0#1 : tensor<4xf32, #fxmlir.device<"cpu">>, tensor<4xf32, #fxmlir.device<"cpu">>
}

// -----

// A row that may be empty has no first element to shift by: the plain mean.
// CHECK-LABEL: func.func private @var_mean_dynamic_row
// CHECK-NOT: tensor.extract_slice
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<4x?xf32>)
// CHECK-NOT: tensor.extract_slice
func.func private @var_mean_dynamic_row(%x: tensor<4x?xf32, #fxmlir.device<"cpu">>) -> (tensor<4x1xf32, #fxmlir.device<"cpu">>, tensor<4x1xf32, #fxmlir.device<"cpu">>) {
  %0:2 = fxmlir.aten.var_mean.correction %x {dim = array<i64: -1>, correction = 0 : i64, keepdim = true} : (tensor<4x?xf32, #fxmlir.device<"cpu">>) -> (tensor<4x1xf32, #fxmlir.device<"cpu">>, tensor<4x1xf32, #fxmlir.device<"cpu">>)
  return %0#0, %0#1 : tensor<4x1xf32, #fxmlir.device<"cpu">>, tensor<4x1xf32, #fxmlir.device<"cpu">>
}

// -----

// Layer norm shares var_mean's statistics: shifted by the rows' first
// elements.
// CHECK-LABEL: func.func private @layer_norm
// CHECK-SAME: (%[[X:.*]]: tensor<?x16xbf16>)
// CHECK: %[[FIRST:.*]] = tensor.extract_slice %[[X]][0, 0] [%{{.*}}, 1] [1, 1] : tensor<?x16xbf16> to tensor<?x1xbf16>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[FIRST]] : tensor<?x16xbf16>, tensor<?x1xbf16>)
func.func private @layer_norm(%x: tensor<?x16xbf16, #fxmlir.device<"cpu">>) -> tensor<?x16xbf16, #fxmlir.device<"cpu">> {
  %none = fxmlir.none
  %0:3 = fxmlir.aten.native_layer_norm %x, %none, %none {normalized_shape = array<i64: 16>, eps = 1.0e-05 : f64} : (tensor<?x16xbf16, #fxmlir.device<"cpu">>, none, none) -> (tensor<?x16xbf16, #fxmlir.device<"cpu">>, tensor<?x1xf32, #fxmlir.device<"cpu">>, tensor<?x1xf32, #fxmlir.device<"cpu">>)
  return %0#0 : tensor<?x16xbf16, #fxmlir.device<"cpu">>
}

// -----

// f16/bf16 convert from and to f32 only, as c10's types do: f64 goes
// through f32 both ways (no compiler-rt __truncdfbf2 / __truncdfhf2).
// CHECK-LABEL: func.func private @f64_casts
// CHECK-NOT: f64 to bf16
// CHECK-NOT: f64 to f16
// CHECK-NOT: bf16 to f64
// CHECK: %[[F32:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK-NEXT: arith.truncf %[[F32]] : f32 to bf16
// CHECK: %[[F32B:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK-NEXT: arith.truncf %[[F32B]] : f32 to f16
// CHECK: %[[WIDE:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK-NEXT: arith.extf %[[WIDE]] : f32 to f64
// CHECK-NOT: f64 to bf16
// CHECK-NOT: f64 to f16
// CHECK-NOT: bf16 to f64
func.func private @f64_casts(%x: tensor<8xf64, #fxmlir.device<"cpu">>) -> (tensor<8xf16, #fxmlir.device<"cpu">>, tensor<8xf64, #fxmlir.device<"cpu">>) {
  %0 = fxmlir.aten._to_copy %x {dtype = bf16, non_blocking = false} : (tensor<8xf64, #fxmlir.device<"cpu">>) -> tensor<8xbf16, #fxmlir.device<"cpu">>
  %1 = fxmlir.aten._to_copy %x {dtype = f16, non_blocking = false} : (tensor<8xf64, #fxmlir.device<"cpu">>) -> tensor<8xf16, #fxmlir.device<"cpu">>
  %2 = fxmlir.aten._to_copy %0 {dtype = f64, non_blocking = false} : (tensor<8xbf16, #fxmlir.device<"cpu">>) -> tensor<8xf64, #fxmlir.device<"cpu">>
  return %1, %2 : tensor<8xf16, #fxmlir.device<"cpu">>, tensor<8xf64, #fxmlir.device<"cpu">>
}
