//===- FuseBiasAddDropout.cpp - the seed's bias_add + dropout rewrite -----===//
//
// The patterns are BiasAddDropoutFusions.td's (BiasAddFusions.cpp);
// fxmlir-fuse-mask-draws then merges each draw into its kernel.
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Transforms/FusionConfig.h"
#include "fxmlir/Transforms/Passes.h"

namespace fxmlir {
#define GEN_PASS_DEF_FUSEBIASADDDROPOUT
#include "fxmlir/Transforms/Passes.h.inc"

namespace {
struct FuseBiasAddDropoutPass
    : public PatternPass<FuseBiasAddDropoutPass, impl::FuseBiasAddDropoutBase,
                         /*kFusion=*/true> {
  static void populate(RewritePatternSet &patterns) {
    populateBiasAddDropoutFusionPatterns(patterns);
  }
};
} // namespace
} // namespace fxmlir
