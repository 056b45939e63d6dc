// RUN: fxmlir-opt %s --pass-pipeline='builtin.module(gpu.module(fxmlir-gpu-lower-all-reduce))' | FileCheck %s

// A block-wide sum becomes warp shuffles and a shared-memory exchange
// between warps.
// CHECK-LABEL: gpu.func @block_sum
// CHECK-SAME: workgroup(%{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>)
// CHECK-NOT: gpu.all_reduce
// CHECK: gpu.shuffle xor
// CHECK: gpu.barrier
gpu.module @kernels {
  gpu.func @block_sum(%x: memref<?xf32>) kernel {
    %t = gpu.thread_id x
    %v = memref.load %x[%t] : memref<?xf32>
    %s = gpu.all_reduce add %v uniform {} : (f32) -> f32
    memref.store %s, %x[%t] : memref<?xf32>
    gpu.return
  }
}
