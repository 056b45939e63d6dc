// Every kernel of a rank-3 region launches its threads along x alone:
// cuLaunchKernel refuses a block of more than 64 threads on z, which is
// what GPT-2's residual add + layer norm over [8, 512, 512] got when its
// loops were tiled dim by dim (CUDA error 1 on the H200), and its [8, 512, 1]
// statistics took a block of 256 threads per element.
//
// RUN: fxmlir-opt %s --fxmlir-jit-cuda | FileCheck %s

// CHECK-LABEL: func.func private @add_layer_norm(
// CHECK-NOT: threads in (%c1,
// CHECK: gpu.launch_func {{.*}} blocks in (%c16, %c1, %c1) threads in (%c256, %c1, %c1)
// CHECK-NOT: threads in (%c1,
// CHECK: gpu.launch_func {{.*}}_row_reduction{{.*}} blocks in (%c4096, %c1, %c1) threads in (%c256, %c1, %c1)
// CHECK-NOT: threads in (%c1,
// CHECK: gpu.launch_func {{.*}}_elementwise{{.*}} blocks in (%c2048, %c1, %c1) threads in (%c256, %c1, %c1)
// CHECK-NOT: threads in (%c1,
// CHECK: return
func.func private @add_layer_norm(%x: tensor<8x512x512xf32, #fxmlir.device<"cpu">>, %y: tensor<8x512x512xf32, #fxmlir.device<"cpu">>, %w: tensor<512xf32, #fxmlir.device<"cpu">>, %b: tensor<512xf32, #fxmlir.device<"cpu">>) -> (tensor<8x512x512xf32, #fxmlir.device<"cpu">>, tensor<8x512x1xf32, #fxmlir.device<"cpu">>, tensor<8x512x1xf32, #fxmlir.device<"cpu">>) {
  %s = fxmlir.aten.add.Tensor %x, %y {alpha = 1 : i64} : (tensor<8x512x512xf32, #fxmlir.device<"cpu">>, tensor<8x512x512xf32, #fxmlir.device<"cpu">>) -> tensor<8x512x512xf32, #fxmlir.device<"cpu">>
  %0:3 = fxmlir.aten.native_layer_norm %s, %w, %b {normalized_shape = array<i64: 512>, eps = 1.0e-05 : f64} : (tensor<8x512x512xf32, #fxmlir.device<"cpu">>, tensor<512xf32, #fxmlir.device<"cpu">>, tensor<512xf32, #fxmlir.device<"cpu">>) -> (tensor<8x512x512xf32, #fxmlir.device<"cpu">>, tensor<8x512x1xf32, #fxmlir.device<"cpu">>, tensor<8x512x1xf32, #fxmlir.device<"cpu">>)
  return %0#0, %0#1, %0#2 : tensor<8x512x512xf32, #fxmlir.device<"cpu">>, tensor<8x512x1xf32, #fxmlir.device<"cpu">>, tensor<8x512x1xf32, #fxmlir.device<"cpu">>
}
