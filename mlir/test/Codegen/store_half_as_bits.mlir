// RUN: fxmlir-opt %s --fxmlir-store-half-bits | FileCheck %s

// A bf16 or f16 (scalar or vector) made from i16 bits is stored as the bits;
// the bitcast goes when nothing else reads it.
// CHECK-LABEL: llvm.func @bits
// CHECK-SAME: (%[[P:.*]]: !llvm.ptr, %[[S:.*]]: i16, %[[V:.*]]: vector<8xi16>)
// CHECK-NOT: llvm.bitcast
// CHECK: llvm.store %[[S]], %[[P]] : i16, !llvm.ptr
// CHECK: llvm.store %[[S]], %[[P]] : i16, !llvm.ptr
// CHECK: llvm.store %[[V]], %[[P]] : vector<8xi16>, !llvm.ptr
llvm.func @bits(%p: !llvm.ptr, %s: i16, %v: vector<8xi16>) {
  %b = llvm.bitcast %s : i16 to bf16
  llvm.store %b, %p : bf16, !llvm.ptr
  %h = llvm.bitcast %s : i16 to f16
  llvm.store %h, %p : f16, !llvm.ptr
  %bv = llvm.bitcast %v : vector<8xi16> to vector<8xbf16>
  llvm.store %bv, %p : vector<8xbf16>, !llvm.ptr
  llvm.return
}

// A bitcast another op reads stays for it.
// CHECK-LABEL: llvm.func @shared
// CHECK: %[[B:.*]] = llvm.bitcast %{{.*}} : i16 to bf16
// CHECK: llvm.store %{{.*}}, %{{.*}} : i16, !llvm.ptr
// CHECK: llvm.fpext %[[B]]
llvm.func @shared(%p: !llvm.ptr, %s: i16) -> f32 {
  %b = llvm.bitcast %s : i16 to bf16
  llvm.store %b, %p : bf16, !llvm.ptr
  %f = llvm.fpext %b : bf16 to f32
  llvm.return %f : f32
}

// Left alone: a bf16 that is no bitcast, a bitcast from another width, and
// a bitcast to a type of 32 bits.
// CHECK-LABEL: llvm.func @others
// CHECK: llvm.store %{{.*}}, %{{.*}} : bf16, !llvm.ptr
// CHECK: llvm.store %{{.*}}, %{{.*}} : vector<2xbf16>, !llvm.ptr
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr
llvm.func @others(%p: !llvm.ptr, %x: bf16, %w: i32, %i: i32) {
  llvm.store %x, %p : bf16, !llvm.ptr
  %v = llvm.bitcast %w : i32 to vector<2xbf16>
  llvm.store %v, %p : vector<2xbf16>, !llvm.ptr
  %f = llvm.bitcast %i : i32 to f32
  llvm.store %f, %p : f32, !llvm.ptr
  llvm.return
}
