//===- Symbols.h - The runtime's symbol table -------------------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// Every symbol of RuntimeSymbols.def with its address in this process: what
// a JIT resolves the calls of a lowered program to.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_RUNTIME_SYMBOLS_H
#define EPL_RUNTIME_SYMBOLS_H

#include <vector>

namespace epl::rt {

struct Symbol {
  /// The linker name: `_mlir_ciface_epl_rt_all_reduce_f32`, `memrefCopy`.
  const char *name;
  void *address;
};

/// The runtime's symbols, in the order RuntimeSymbols.def lists them.
const std::vector<Symbol> &symbols();

} // namespace epl::rt

#endif // EPL_RUNTIME_SYMBOLS_H
