//===- Descriptors.cpp - Buffers passed as bare pointers ------------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/Transforms/Descriptors.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

std::pair<Value, Value>
mlir::epl::pointersOf(OpBuilder &b, Location loc, Value memref,
                      const LLVMTypeConverter &converter) {
  if (auto cast = memref.getDefiningOp<UnrealizedConversionCastOp>();
      cast && cast->getNumOperands() == 1) {
    Value pointers[2];
    Value d = cast.getOperand(0);
    while (auto insert = d.getDefiningOp<LLVM::InsertValueOp>()) {
      ArrayRef<int64_t> position = insert.getPosition();
      if (position.size() == 1 && position[0] < 2 && !pointers[position[0]])
        pointers[position[0]] = insert.getValue();
      d = insert.getContainer();
    }
    if (pointers[0] && pointers[1])
      return {pointers[0], pointers[1]};
  }
  Value descriptor =
      UnrealizedConversionCastOp::create(
          b, loc, converter.convertType(memref.getType()), memref)
          .getResult(0);
  MemRefDescriptor d(descriptor);
  return {d.allocatedPtr(b, loc), d.alignedPtr(b, loc)};
}

Value mlir::epl::bufferAt(OpBuilder &b, Location loc, MemRefType type,
                          Value allocated, Value aligned,
                          const LLVMTypeConverter &converter) {
  Value descriptor = MemRefDescriptor::fromStaticShape(b, loc, converter, type,
                                                       allocated, aligned);
  return UnrealizedConversionCastOp::create(b, loc, type, descriptor)
      .getResult(0);
}
