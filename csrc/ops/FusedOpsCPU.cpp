//===- FusedOpsCPU.cpp - the CPU kernels of torch.ops.fxmlir --------------===//
//
// Registers the CPU kernels of the op families that have no unit of their
// own (python/fxmlir/fused_ops.py's FAMILY_UNITS: the two largest compile in
// parallel in FusedOpsCPUBias.cpp and FusedOpsCPUDropout.cpp).
//
//===----------------------------------------------------------------------===//

#include "LauncherCPU.h"

#include "FusedOpsCPURegistration.inc"
