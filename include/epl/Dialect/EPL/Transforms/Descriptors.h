//===- Descriptors.h - Buffers passed as bare pointers ----------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//
//
// Host code passes a memref to a function as its LLVM descriptor: two
// pointers, an offset, and a size and a stride per dimension, each a
// separate argument. Where the type says all but the pointers, the passes
// that make calls of their own (epl-thread-kernels, epl-outline-repeats)
// pass the pointers alone, and the callee rebuilds the rest from constants.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_DIALECT_EPL_TRANSFORMS_DESCRIPTORS_H
#define EPL_DIALECT_EPL_TRANSFORMS_DESCRIPTORS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir {
class LLVMTypeConverter;
} // namespace mlir

namespace mlir::epl {

/// Whether a buffer of `type` can cross a call as its pointers alone: its
/// sizes, strides and offset are in its type, and it lives in the default
/// address space (the pointers a context or an out-array holds).
inline bool hasStaticLayout(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.hasStaticShape() || memref.getMemorySpace())
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(memref.getStridesAndOffset(strides, offset)) &&
         !ShapedType::isDynamic(offset) &&
         llvm::none_of(strides, ShapedType::isDynamic);
}

/// The two pointers (allocated, aligned) of `memref`, a buffer of static
/// layout: read back from the descriptor `bufferAt` built (a buffer one
/// call returned, passed on to the next) or extracted from its descriptor.
std::pair<Value, Value> pointersOf(OpBuilder &b, Location loc, Value memref,
                                   const LLVMTypeConverter &converter);

/// The buffer of static layout `type` at the two pointers, its descriptor's
/// other fields constants.
Value bufferAt(OpBuilder &b, Location loc, MemRefType type, Value allocated,
               Value aligned, const LLVMTypeConverter &converter);

} // namespace mlir::epl

#endif // EPL_DIALECT_EPL_TRANSFORMS_DESCRIPTORS_H
