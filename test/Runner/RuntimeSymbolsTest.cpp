//===- RuntimeSymbolsTest.cpp - The lowering calls what the JIT has -------===//
//
// Part of EPL-MLIR.
//
// Lowers every collective and point-to-point op for every element type the
// runtime moves, matmuls, group_index and a pipeline action with
// `epl-lower-to-cpu`, and checks that every function the result declares
// (what the JIT must resolve) is in the runtime's symbol table: a runtime
// function that the lowering calls but RuntimeSymbols.def does not list
// fails here, not at a user's run.
//
//===----------------------------------------------------------------------===//

#include "epl/InitEPL.h"
#include "epl/Pipelines/Pipelines.h"
#include "epl/Runtime/Symbols.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringSet.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::epl;

namespace {
/// Every communication op on `T` (f32, i64, ...), in one function.
std::string communication(const std::string &t) {
  std::string x = "tensor<4x4x" + t + ">", gathered = "tensor<8x4x" + t + ">",
              scattered = "tensor<2x4x" + t + ">",
              exchanged = "tensor<2x8x" + t + ">";
  return "func.func @comm_" + t + "(%a: " + x + ") -> (" + x + ", " + gathered +
         ", " + scattered + ", " + exchanged + ", " + x + ", " + x +
         ") {\n"
         "  %0 = epl.all_reduce %a on @mesh over [\"x\"] sum : " +
         x + "\n  %1 = epl.all_gather %a on @mesh over [\"x\"] dim 0 : " + x +
         " -> " + gathered +
         "\n  %2 = epl.reduce_scatter %a on @mesh over [\"x\"] sum dim 0 : " +
         x + " -> " + scattered +
         "\n  %3 = epl.all_to_all %a on @mesh over [\"x\"] split 0 concat 1 "
         ": " +
         x + " -> " + exchanged +
         "\n  %4 = epl.broadcast %a on @mesh over [\"x\"] root 1 : " + x +
         "\n  epl.send %a on @mesh over [\"x\"] to 1 tag 5 : " + x +
         "\n  %5 = epl.recv on @mesh over [\"x\"] from 1 tag 5 : " + x +
         "\n  return %0, %1, %2, %3, %4, %5 : " + x + ", " + gathered + ", " +
         scattered + ", " + exchanged + ", " + x + ", " + x + "\n}\n";
}

std::string matmul(const std::string &t) {
  std::string x = "tensor<4x4x" + t + ">";
  return "func.func @matmul_" + t + "(%a: " + x + ", %b: " + x + ", %c: " + x +
         ") -> " + x + " {\n  %0 = linalg.matmul ins(%a, %b : " + x + ", " + x +
         ") outs(%c : " + x + ") -> " + x + "\n  return %0 : " + x + "\n}\n";
}

TEST(RuntimeSymbols, LoweringCallsOnlyRegisteredSymbols) {
  std::string source =
      "epl.mesh @mesh [\"x\" = 2]\n"
      "func.func @index() -> index {\n"
      "  %0 = epl.group_index on @mesh over [\"x\"]\n"
      "  return %0 : index\n}\n"
      "func.func @action() {\n"
      "  func.call @piece() {epl.action = #epl.action<phase = forward, "
      "micro_batch = 0, stage = 0>} : () -> ()\n"
      "  return\n}\n"
      "func.func private @piece() { return }\n";
  for (const char *t : {"f32", "f64", "i32", "i64", "f16"})
    source += communication(t);
  for (const char *t : {"f32", "f64"})
    source += matmul(t);

  DialectRegistry registry;
  registerEPLDialects(registry);
  MLIRContext context(registry);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
  ASSERT_TRUE(module);
  PassManager pm(&context);
  buildCPULoweringPipeline(pm, CPULoweringOptions());
  ASSERT_TRUE(succeeded(pm.run(*module)));

  llvm::StringSet<> registered;
  for (const ::epl::rt::Symbol &symbol : ::epl::rt::symbols())
    registered.insert(symbol.name);
  llvm::StringSet<> called;
  for (auto fn : module->getOps<LLVM::LLVMFuncOp>())
    if (fn.isExternal()) {
      called.insert(fn.getSymName());
      EXPECT_TRUE(registered.contains(fn.getSymName()))
          << "the lowering calls @" << fn.getSymName().str()
          << ", which the runtime's symbol table (RuntimeSymbols.def) lacks";
    }
  // The module above reaches every kind of call.
  std::vector<std::string> expected = {
      "_mlir_ciface_epl_rt_group_index", "_mlir_ciface_epl_rt_action_begin",
      "_mlir_ciface_epl_rt_action_end",  "_mlir_ciface_epl_rt_matmul_f32",
      "_mlir_ciface_epl_rt_matmul_f64",  "_mlir_memref_to_llvm_alloc"};
  for (const char *kind : {"all_reduce", "all_gather", "reduce_scatter",
                           "all_to_all", "broadcast", "send", "recv"})
    for (const char *t : {"f32", "f64", "i32", "i64", "f16"})
      expected.push_back(std::string("_mlir_ciface_epl_rt_") + kind + "_" + t);
  for (const std::string &name : expected)
    EXPECT_TRUE(called.contains(name)) << name << " was not called";
}

TEST(RuntimeSymbols, TableHasEveryListedSymbolOnce) {
  llvm::StringSet<> seen;
  size_t listed = 0;
#define EPL_RT_FUNCTION(NAME) ++listed;
#define EPL_RT_TYPED_FUNCTION(NAME, T) ++listed;
#define EPL_RT_SYMBOL(SYMBOL) ++listed;
#include "epl/Runtime/RuntimeSymbols.def"
  EXPECT_EQ(::epl::rt::symbols().size(), listed);
  for (const ::epl::rt::Symbol &symbol : ::epl::rt::symbols()) {
    EXPECT_NE(symbol.address, nullptr) << symbol.name;
    EXPECT_TRUE(seen.insert(symbol.name).second) << symbol.name;
  }
}
} // namespace
