//===- Kernels.h - How kernels are named ------------------------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_DIALECT_EPL_TRANSFORMS_KERNELS_H
#define EPL_DIALECT_EPL_TRANSFORMS_KERNELS_H

#include "llvm/ADT/StringRef.h"

namespace mlir::epl {

/// The kernels epl-outline-kernels makes (one loop nest each, which host
/// code calls) and the emulated GPU kernels are named with this prefix;
/// later passes and the JIT tell them from host code by it.
inline constexpr llvm::StringLiteral kKernelPrefix = "__epl_kernel_";

inline bool isKernelName(llvm::StringRef name) {
  return name.starts_with(kKernelPrefix);
}

} // namespace mlir::epl

#endif // EPL_DIALECT_EPL_TRANSFORMS_KERNELS_H
