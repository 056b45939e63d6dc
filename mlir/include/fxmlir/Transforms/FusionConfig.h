//===- FusionConfig.h - how fusion passes apply their patterns --*- C++ -*-===//
//
// Fusion passes apply their patterns with fusionRewriteConfig(), so that an
// explain run (fxmlir::Module::explainFusions) sees every pattern attempt and
// match failure of the real passes, not of a copy of their pattern sets.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_TRANSFORMS_FUSIONCONFIG_H
#define FXMLIR_TRANSFORMS_FUSIONCONFIG_H

#include "fxmlir/Support/MLIR.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace fxmlir {

/// The match-failure reason of a pattern written for one device on another
/// device's ops: no fusion was missed there, so explain leaves it out.
inline constexpr llvm::StringLiteral kOtherDeviceReason =
    "the pattern is for another device";

/// On each op fxmlir-outline-jit-regions left out of the regions, with its
/// explain option: why, in words (a lone op, the cost model's bytes).
inline constexpr llvm::StringLiteral kLeftOutAttr = "fxmlir.left_out";

/// The greedy driver's default config, with the listener a
/// ScopedFusionListener installed on this thread, if any.
GreedyRewriteConfig fusionRewriteConfig();

/// Makes fusionRewriteConfig() carry `listener` on this thread while alive.
/// Pass managers of the core run passes on the calling thread (the context
/// has threading disabled), so the fusion passes of a run see it.
class ScopedFusionListener {
public:
  explicit ScopedFusionListener(RewriterBase::Listener *listener);
  ~ScopedFusionListener();
  ScopedFusionListener(const ScopedFusionListener &) = delete;
  ScopedFusionListener &operator=(const ScopedFusionListener &) = delete;

private:
  RewriterBase::Listener *previous;
};

/// How the pattern passes rewrite: `Base` is the pass's generated base
/// (impl::RecomposeBase), `Derived::populate` fills its pattern set, and
/// with `kFusion` the patterns apply with fusionRewriteConfig(), so that
/// explain reports the sites they left.
template <typename Derived, template <typename> class Base, bool kFusion>
struct PatternPass : public Base<Derived> {
  using Base<Derived>::Base;
  void runOnOperation() final {
    RewritePatternSet patterns(&this->getContext());
    Derived::populate(patterns);
    GreedyRewriteConfig config =
        kFusion ? fusionRewriteConfig() : GreedyRewriteConfig();
    if (failed(applyPatternsGreedily(this->getOperation(), std::move(patterns),
                                     config)))
      this->signalPassFailure();
  }
};

} // namespace fxmlir

#endif // FXMLIR_TRANSFORMS_FUSIONCONFIG_H
