//===- Dims.h - torch's dim convention --------------------------*- C++ -*-===//
//
// Header-only and dependency-free: the MLIR core and the torch op library
// (csrc/ops) both include it.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_SUPPORT_DIMS_H
#define FXMLIR_SUPPORT_DIMS_H

#include <cstdint>
#include <optional>

namespace fxmlir {

/// `dim` in [0, rank) for a torch dim in [-rank, rank) (negative counts from
/// the end), or nothing when it is out of range.
inline std::optional<int64_t> normalizeDim(int64_t dim, int64_t rank) {
  if (dim < -rank || dim >= rank)
    return std::nullopt;
  return dim < 0 ? dim + rank : dim;
}

} // namespace fxmlir

#endif // FXMLIR_SUPPORT_DIMS_H
