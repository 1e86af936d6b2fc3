//===- KernelsOnHost.h - GPU kernels as host functions ----------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// What epl-gpu-kernels-to-host (kernels called from the host code) and
// epl-host-kernel-images (kernels launched through a fake CUDA driver)
// share: a kernel as a host function with explicit block and thread loops.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_LIB_CONVERSION_EPLTOGPU_KERNELSONHOST_H
#define EPL_LIB_CONVERSION_EPLTOGPU_KERNELSONHOST_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::epl {

/// A private host function `name`, built at `moduleBuilder`, that runs
/// every thread of every block of `kernel`, blocks outermost: it takes the
/// kernel's arguments, then the grid's and the block's sizes (x, y, z, as
/// `index`). Fails, naming the op, on a kernel whose threads must run
/// together (barriers, shuffles, workgroup or private memory).
FailureOr<func::FuncOp> buildHostKernel(gpu::GPUFuncOp kernel, StringRef name,
                                        OpBuilder &moduleBuilder);

} // namespace mlir::epl

#endif // EPL_LIB_CONVERSION_EPLTOGPU_KERNELSONHOST_H
