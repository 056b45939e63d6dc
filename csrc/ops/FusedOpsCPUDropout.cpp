//===- FusedOpsCPUDropout.cpp - CPU kernels of the dropout op -------------===//
//
// fused_bias_dropout_add's CPU kernels: every mask form, activation,
// residual, dtype and target clone, in their own unit so that they compile in
// parallel.
//
//===----------------------------------------------------------------------===//

#include "LauncherCPU.h"

#define FXMLIR_REGISTER_FAMILY_DEFAULT 0
#define FXMLIR_REGISTER_FAMILY_Dropout 1
#define FXMLIR_REGISTER_CPU
#include "FusedOpsRegistration.inc"
