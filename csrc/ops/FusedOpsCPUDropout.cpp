//===- FusedOpsCPUDropout.cpp - CPU kernels of the dropout op -------------===//
//
// fused_bias_dropout_add's CPU kernels: every mask form, activation,
// residual, dtype and target clone, in their own unit so that they compile in
// parallel.
//
//===----------------------------------------------------------------------===//

#include "LauncherCPU.h"

#include "FusedOpsCPUDropoutRegistration.inc"
