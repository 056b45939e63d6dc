//===- RegionCost.h - whether a JIT region beats eager's kernels -*- C++ -*-===//
//
// A region pays when it moves fewer bytes than the eager kernels it replaces,
// each of which reads its operands and writes its results, plus one call's
// overhead per kernel. Row reductions the JIT runs slower per byte than
// eager's hand-written kernels count at a penalty measured on the CPU.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_LIB_TRANSFORMS_REGIONCOST_H
#define FXMLIR_LIB_TRANSFORMS_REGIONCOST_H

#include "fxmlir/Support/MLIR.h"

#include "mlir/IR/Operation.h"

namespace fxmlir {

/// The cost of a region and of the eager kernels it replaces, in bytes moved
/// (a kernel call counts as the bytes it could have moved in its overhead).
struct RegionCost {
  double eager = 0;
  double region = 0;

  bool pays() const { return region < eager; }
};

/// The cost of running `region` (ops of one block, in order) as one JIT
/// function rather than op by op.
RegionCost estimateRegionCost(ArrayRef<Operation *> region);

} // namespace fxmlir

#endif // FXMLIR_LIB_TRANSFORMS_REGIONCOST_H
