//===- RandomMask.h - Torch-free CPU kernel of random_mask_like -----------===//

#ifndef FXMLIR_KERNELS_CPU_RANDOMMASK_H
#define FXMLIR_KERNELS_CPU_RANDOMMASK_H

#include <cstdint>

namespace fxmlir::kernels::cpu {

/// Fills mask[begin, end): true (keep) with probability 1 - p. Element i takes
/// word i % 4 of Philox block (counter i / 4, key seed), so the mask depends on
/// the seed only, not on how the range is split across threads.
void randomMask(bool *mask, double p, uint64_t seed, int64_t begin,
                int64_t end);

} // namespace fxmlir::kernels::cpu

#endif // FXMLIR_KERNELS_CPU_RANDOMMASK_H
