//===- BiasAddFusions.cpp - the bias_add + activation/dropout patterns ----===//
//
// Each family's patterns are every DRR def of its .td file: a new fusion of
// the family is one def there.
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Transforms/Passes.h"
#include "fxmlir/Transforms/PatternUtils.h"

namespace fxmlir {
namespace activation {
#include "fxmlir/Transforms/Patterns/BiasAddActivationFusions.inc"
} // namespace activation
namespace dropout {
#include "fxmlir/Transforms/Patterns/BiasAddDropoutFusions.inc"
} // namespace dropout

void populateBiasAddActivationFusionPatterns(RewritePatternSet &patterns) {
  activation::populateWithGenerated(patterns);
}

void populateBiasAddDropoutFusionPatterns(RewritePatternSet &patterns) {
  dropout::populateWithGenerated(patterns);
}
} // namespace fxmlir
