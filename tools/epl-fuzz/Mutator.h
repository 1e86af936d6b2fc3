//===- Mutator.h - Token-level mutations of MLIR source ---------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// epl-fuzz's custom mutator. libFuzzer's byte-level mutations of MLIR text
// mostly make syntax errors, and upstream MLIR's custom parsers crash on
// some of those (docs/reliability.md lists them) before any EPL code runs.
// These mutations keep the syntax and change what the passes read: integers
// (sizes, indices, device counts), strings (axes, roles), types, list
// entries, attribute entries and whole lines.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_TOOLS_EPL_FUZZ_MUTATOR_H
#define EPL_TOOLS_EPL_FUZZ_MUTATOR_H

#include <cstdint>
#include <string>

namespace mlir::epl::fuzz {

/// Applies one to three mutations to `text`, chosen by `seed`; the same
/// text and seed give the same result.
std::string mutate(const std::string &text, uint32_t seed);

} // namespace mlir::epl::fuzz

#endif // EPL_TOOLS_EPL_FUZZ_MUTATOR_H
