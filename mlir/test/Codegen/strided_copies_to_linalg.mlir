// RUN: fxmlir-opt %s --pass-pipeline='builtin.module(func.func(fxmlir-strided-copies-to-linalg))' | FileCheck %s

// A copy into a slice becomes linalg.copy; a copy between contiguous
// buffers stays memref.copy (a memcpy).
// CHECK-LABEL: func.func @copies
// CHECK-SAME: (%[[X:.*]]: memref<2x4xf32>, %[[Y:.*]]: memref<2x8xf32>, %[[Z:.*]]: memref<2x4xf32>)
// CHECK: %[[S:.*]] = memref.subview %[[Y]][0, 4] [2, 4] [1, 1]
// CHECK: linalg.copy ins(%[[X]] : memref<2x4xf32>) outs(%[[S]] : memref<2x4xf32, strided<[8, 1], offset: 4>>)
// CHECK: memref.copy %[[X]], %[[Z]] : memref<2x4xf32> to memref<2x4xf32>
// CHECK-NOT: memref.copy
func.func @copies(%x: memref<2x4xf32>, %y: memref<2x8xf32>, %z: memref<2x4xf32>) {
  %s = memref.subview %y[0, 4] [2, 4] [1, 1] : memref<2x8xf32> to memref<2x4xf32, strided<[8, 1], offset: 4>>
  memref.copy %x, %s : memref<2x4xf32> to memref<2x4xf32, strided<[8, 1], offset: 4>>
  memref.copy %x, %z : memref<2x4xf32> to memref<2x4xf32>
  return
}
