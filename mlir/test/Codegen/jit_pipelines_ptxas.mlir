// Every CUDA kernel the JIT emits for the functions of jit_pipelines.mlir,
// assembled by ptxas for sm_90 (Inputs/check_ptxas.py): each assembles
// without spilling; each elementwise kernel (fxmlir-gpu-vectorize-elementwise)
// makes 16-byte-class vector accesses (ld.global.v4.f32, v8 of bf16 ...)
// and each row reduction (fxmlir-gpu-row-reductions) shuffles (shfl.sync).
// The script exits 1 naming the kernel that does not.
//
// REQUIRES: ptxas
// RUN: fxmlir-opt %S/jit_pipelines.mlir --fxmlir-jit-cuda-ptx='chip=sm_90 features=+ptx80' \
// RUN:   | %python %S/Inputs/check_ptxas.py --arch sm_90 | FileCheck %s

// CHECK: arith_elementwise arith_elementwise: registers={{[0-9]+}} spill_bytes=0 vector_loads={{[1-9]}}
// CHECK: reductions_row_reduction reductions_row_reduction: registers={{[0-9]+}} spill_bytes=0 {{.*}} shfl_sync={{[1-9]}}
// CHECK: SUMMARY kernels=[[N:[0-9]+]] assembled=[[N]] spilling=0 elementwise=[[E:[0-9]+]] with_vector_access=[[E]] with_vector_loads={{[0-9]+}} row_reductions=[[R:[0-9]+]] with_shfl_sync=[[R]]
