//===- EPL.td - EPL dialect top-level file -----------------*- tablegen -*-===//
//
// Part of EPL-MLIR. The dialect's pieces live in their own files; this file
// only gathers them, so that one tablegen invocation sees the whole dialect.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_TD
#define EPL_TD

include "epl/Dialect/EPL/IR/EPLDialect.td"
include "epl/Dialect/EPL/IR/EPLInterfaces.td"
include "epl/Dialect/EPL/IR/EPLAttrs.td"
include "epl/Dialect/EPL/IR/EPLOps.td"

#endif // EPL_TD
