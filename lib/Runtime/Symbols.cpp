//===- Symbols.cpp - The runtime's symbol table ---------------------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Runtime/Symbols.h"
#include "epl/Runtime/Runtime.h"

using namespace epl::rt;

const std::vector<Symbol> &epl::rt::symbols() {
  // Taking each address checks at compile time that Runtime.h declares
  // every function of the list.
  static const std::vector<Symbol> table = {
#define EPL_RT_FUNCTION(NAME)                                                  \
  {"_mlir_ciface_epl_rt_" #NAME,                                               \
   reinterpret_cast<void *>(&_mlir_ciface_epl_rt_##NAME)},
#define EPL_RT_TYPED_FUNCTION(NAME, T)                                         \
  {"_mlir_ciface_epl_rt_" #NAME "_" #T,                                        \
   reinterpret_cast<void *>(&_mlir_ciface_epl_rt_##NAME##_##T)},
#define EPL_RT_SYMBOL(SYMBOL) {#SYMBOL, reinterpret_cast<void *>(&SYMBOL)},
#include "epl/Runtime/RuntimeSymbols.def"
  };
  return table;
}
