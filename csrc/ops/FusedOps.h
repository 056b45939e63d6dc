//===- FusedOps.h - Argument checks shared by the fxmlir op kernels -------===//
//
// Every backend (CPU, CUDA, Meta) validates through these, so the ops fail
// with the same messages everywhere, including under fake tensors with
// symbolic shapes.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_OPS_FUSEDOPS_H
#define FXMLIR_OPS_FUSEDOPS_H

#include <ATen/core/Tensor.h>
#include <c10/util/string_view.h>

namespace fxmlir::ops {

/// Checks x, bias and axis of a bias op; returns axis in [0, x.dim()).
int64_t checkBias(const char *op, const at::Tensor &x, const at::Tensor &bias,
                  int64_t axis);

/// Checks that `other` (named `name`) has x's shape and device, and `dtype`.
void checkLikeX(const char *op, const char *name, const at::Tensor &other,
                const at::Tensor &x, at::ScalarType dtype);

/// Parses gelu's approximate argument: true for "tanh", false for "none".
bool parseApproximate(const char *op, c10::string_view approximate);

void checkDropProbability(double p);

/// Size of the bias axis and product of the dimensions after it (concrete
/// shapes only: real kernels, not Meta).
struct BiasExtent {
  int64_t axisSize;
  int64_t inner;
};
BiasExtent biasExtent(const at::Tensor &x, int64_t axis);

} // namespace fxmlir::ops

#endif // FXMLIR_OPS_FUSEDOPS_H
