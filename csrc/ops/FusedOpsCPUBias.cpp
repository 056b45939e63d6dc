//===- FusedOpsCPUBias.cpp - CPU kernels of the bias ops ------------------===//
//
// The bias + activation ops' CPU kernels: every activation, dtype and
// target clone, in their own unit so that they compile in parallel.
//
//===----------------------------------------------------------------------===//

#include "LauncherCPU.h"

#include "FusedOpsCPUBiasRegistration.inc"
