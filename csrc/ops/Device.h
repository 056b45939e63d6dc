//===- Device.h - the devices torch.ops.fxmlir.* kernels serve ----*- C++ -*-===//

#ifndef FXMLIR_OPS_DEVICE_H
#define FXMLIR_OPS_DEVICE_H

namespace fxmlir::ops {

/// A dispatch key of the op library: each op's kernel is a function template
/// over it (tools/gen_ops.py registers `fusedBiasAddGelu<Device::CPU>`).
enum class Device { Meta, CPU, CUDA };

} // namespace fxmlir::ops

#endif // FXMLIR_OPS_DEVICE_H
