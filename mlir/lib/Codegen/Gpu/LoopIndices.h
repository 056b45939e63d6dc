//===- LoopIndices.h - a linalg operand's indices in a loop nest -*- C++ -*-===//
//
// The GPU mappings of linalg.generic (row reductions, vectorized
// elementwise kernels) address each operand through its indexing map.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_LIB_CODEGEN_GPU_LOOPINDICES_H
#define FXMLIR_LIB_CODEGEN_GPU_LOOPINDICES_H

#include "fxmlir/Support/MLIR.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"

namespace fxmlir {

/// `map` (loop dims and constants only) applied to the loop indices.
inline SmallVector<Value> indicesOf(OpBuilder &b, Location loc, AffineMap map,
                                    ArrayRef<Value> loops) {
  SmallVector<Value> indices;
  for (AffineExpr expr : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      indices.push_back(loops[dim.getPosition()]);
    else
      indices.push_back(arith::ConstantIndexOp::create(
          b, loc, cast<AffineConstantExpr>(expr).getValue()));
  }
  return indices;
}

} // namespace fxmlir

#endif // FXMLIR_LIB_CODEGEN_GPU_LOOPINDICES_H
