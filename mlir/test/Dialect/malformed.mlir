// Malformed input: a diagnostic with a location and a non-zero exit code.
// RUN: not fxmlir-opt %s 2>&1 | FileCheck %s

// CHECK: malformed.mlir:[[@LINE+2]]:{{[0-9]+}}: error: custom op 'fxmlir.no_such_op' is unknown
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = fxmlir.no_such_op %x : tensor<8xf32>
  return %0 : tensor<8xf32>
}
