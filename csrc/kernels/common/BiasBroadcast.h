//===- BiasBroadcast.h - how a bias op's kernels index the bias -----------===//

#ifndef FXMLIR_KERNELS_COMMON_BIASBROADCAST_H
#define FXMLIR_KERNELS_COMMON_BIASBROADCAST_H

#include <cstdint>

namespace fxmlir::kernels {

/// x is a contiguous [outer, axisSize, inner] tensor of numel elements, and
/// element i uses bias[(i / inner) % axisSize].
struct BiasBroadcast {
  int64_t numel;
  int64_t axisSize;
  int64_t inner;
};

} // namespace fxmlir::kernels

#endif // FXMLIR_KERNELS_COMMON_BIASBROADCAST_H
