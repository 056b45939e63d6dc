//===- FusionConfig.cpp - how fusion passes apply their patterns ----------===//

#include "fxmlir/Transforms/FusionConfig.h"

using namespace mlir;

static thread_local RewriterBase::Listener *fusionListener = nullptr;

GreedyRewriteConfig fxmlir::fusionRewriteConfig() {
  GreedyRewriteConfig config;
  config.setListener(fusionListener);
  return config;
}

fxmlir::ScopedFusionListener::ScopedFusionListener(
    RewriterBase::Listener *listener)
    : previous(fusionListener) {
  fusionListener = listener;
}

fxmlir::ScopedFusionListener::~ScopedFusionListener() {
  fusionListener = previous;
}
