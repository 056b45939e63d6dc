//===- FusedOpsCPU.cpp - the CPU kernels of torch.ops.fxmlir --------------===//
//
// Registers the CPU kernels of every op family but the two largest,
// which compile in parallel in FusedOpsCPUBias.cpp and FusedOpsCPUDropout.cpp.
//
//===----------------------------------------------------------------------===//

#include "LauncherCPU.h"

#define FXMLIR_REGISTER_FAMILY_Bias 0
#define FXMLIR_REGISTER_FAMILY_Dropout 0
#define FXMLIR_REGISTER_FAMILY_Jit 0 // csrc/runtime
#define FXMLIR_REGISTER_CPU
#include "FusedOpsRegistration.inc"
