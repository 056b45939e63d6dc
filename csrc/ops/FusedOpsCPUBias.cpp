//===- FusedOpsCPUBias.cpp - CPU kernels of the bias ops ------------------===//
//
// The bias + activation ops' CPU kernels: every activation, dtype and
// target clone, in their own unit so that they compile in parallel.
//
//===----------------------------------------------------------------------===//

#include "LauncherCPU.h"

#define FXMLIR_REGISTER_FAMILY_DEFAULT 0
#define FXMLIR_REGISTER_FAMILY_Bias 1
#define FXMLIR_REGISTER_CPU
#include "FusedOpsRegistration.inc"
