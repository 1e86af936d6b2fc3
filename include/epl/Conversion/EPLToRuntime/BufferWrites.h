//===- BufferWrites.h - What last wrote a buffer, on buffers ----*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// Which op last touched a buffer before another, and whether it filled it
// with one value: so that an op about to overwrite every element (a GEMM,
// a reduction's kernel) can start from that value itself and the fill's
// pass over the buffer goes (epl-matmul-to-runtime, epl-linalg-to-gpu).
//
//===----------------------------------------------------------------------===//

#ifndef EPL_CONVERSION_EPLTORUNTIME_BUFFERWRITES_H
#define EPL_CONVERSION_EPLTORUNTIME_BUFFERWRITES_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

namespace mlir::epl {
/// The buffer a view of it (subview, cast, reshape, transpose) was taken
/// from.
Value rootBuffer(Value view);

/// The last op before `before` in its block that touches `buffer`'s
/// memory (through any view, in its operands or its regions' ops); null
/// when none does, or when a call, which might, comes first.
Operation *lastTouch(Value buffer, Operation *before);

/// The last op before `before` in its block that may write `buffer`'s
/// memory: as lastTouch, but ops that only read it (a copy from it, a
/// linalg op's input) are passed over, and so are calls that are not
/// passed it (a buffer is reached through operands only).
Operation *lastWrite(Value buffer, Operation *before);

/// The value `op` writes into every element of exactly `buffer`: a
/// `linalg.fill`, or the generic a generalized fill is (a scalar input
/// yielded into every element); null otherwise.
Value filledWith(Operation *op, Value buffer);
} // namespace mlir::epl

#endif // EPL_CONVERSION_EPLTORUNTIME_BUFFERWRITES_H
