// RUN: fxmlir-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(fxmlir-gpu-device-buffers))' | FileCheck %s

// A temporary of the host function (a row statistic) lives in device memory:
// allocated, copied and freed by async GPU ops, each waited for at once.
// CHECK-LABEL: func.func @temporaries(
// CHECK-SAME: %[[X:.*]]: memref<4x?xf32>, %[[N:.*]]: index
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK: %[[ROWS:.*]], %[[T1:.*]] = gpu.alloc async [%[[T0]]] (%[[N]]) : memref<?xf32>
// CHECK: gpu.wait [%[[T1]]]
// CHECK: %[[T2:.*]] = gpu.wait async
// CHECK: %[[COPY:.*]], %[[T3:.*]] = gpu.alloc async [%[[T2]]] () : memref<4xf32>
// CHECK: gpu.wait [%[[T3]]]
// CHECK: gpu.launch_func @kernels::@k {{.*}} args(%[[X]] : memref<4x?xf32>, %[[ROWS]] : memref<?xf32>)
// CHECK: %[[CAST:.*]] = memref.cast %[[ROWS]]
// CHECK: %[[T4:.*]] = gpu.wait async
// CHECK: %[[T5:.*]] = gpu.memcpy async [%[[T4]]] %[[COPY]], %[[CAST]] : memref<4xf32>, memref<4xf32>
// CHECK: gpu.wait [%[[T5]]]
// CHECK: %[[T6:.*]] = gpu.wait async
// CHECK: %[[T7:.*]] = gpu.dealloc async [%[[T6]]] %[[ROWS]] : memref<?xf32>
// CHECK: gpu.wait [%[[T7]]]
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK-NOT: memref.dealloc
module attributes {gpu.container_module} {
  func.func @temporaries(%x: memref<4x?xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    %rows = memref.alloc(%n) {alignment = 64 : i64} : memref<?xf32>
    %copy = memref.alloc() : memref<4xf32>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%x : memref<4x?xf32>, %rows : memref<?xf32>)
    %cast = memref.cast %rows : memref<?xf32> to memref<4xf32>
    memref.copy %cast, %copy : memref<4xf32> to memref<4xf32>
    memref.dealloc %rows : memref<?xf32>
    memref.dealloc %copy : memref<4xf32>
    return
  }
  gpu.module @kernels {
    gpu.func @k(%x: memref<4x?xf32>, %rows: memref<?xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// The host cannot read a device buffer.
module attributes {gpu.container_module} {
  func.func @host_load(%x: memref<4xf32>) -> f32 {
    %c0 = arith.constant 0 : index
    // expected-error @below {{accesses device memory from the host}}
    %v = memref.load %x[%c0] : memref<4xf32>
    return %v : f32
  }
}
