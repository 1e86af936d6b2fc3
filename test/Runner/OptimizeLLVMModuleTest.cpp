//===- OptimizeLLVMModuleTest.cpp - Kernels' arguments specialized --------===//
//
// Part of EPL-MLIR.
//
// optimizeLLVMModule gives each kernel the constants every call passes (the
// static sizes, strides and offsets of its memref descriptors) and drops
// the arguments it no longer reads, at its calls too; a kernel called other
// than directly keeps its signature.
//
//===----------------------------------------------------------------------===//

#include "epl/Runner/Compile.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace mlir::epl;

namespace {
// Kernel 0: %n is 64 at both calls, %alloc never read, %k differs.
// Kernel 1: its address goes to the runtime (as a task's would).
// Kernel 2: both calls pass the address of @g, which stays an argument: the
// kernels are optimized in a module of their own, with their own copy of
// every global.
constexpr const char *kModule = R"(
define void @__epl_kernel_0(ptr %alloc, ptr %a, i64 %n, i64 %k) {
  %v = load float, ptr %a
  %i = add i64 %n, %k
  %p = getelementptr float, ptr %a, i64 %i
  store float %v, ptr %p
  ret void
}
define void @__epl_kernel_1(ptr %alloc, ptr %a, i64 %n) {
  %p = getelementptr float, ptr %a, i64 %n
  store float 1.0, ptr %p
  ret void
}
@g = internal global [4 x float] zeroinitializer
define void @__epl_kernel_2(ptr %a) {
  store float 1.0, ptr %a
  ret void
}
declare void @run(ptr)
define void @step(ptr %x, ptr %y, i64 %k) {
  call void @__epl_kernel_0(ptr %x, ptr %x, i64 64, i64 %k)
  call void @__epl_kernel_0(ptr %y, ptr %y, i64 64, i64 3)
  call void @__epl_kernel_1(ptr %x, ptr %x, i64 8)
  call void @run(ptr @__epl_kernel_1)
  call void @__epl_kernel_2(ptr @g)
  call void @__epl_kernel_2(ptr @g)
  ret void
}
)";

TEST(OptimizeLLVMModuleTest, SpecializesKernelArguments) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::LLVMContext context;
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> m =
      llvm::parseAssemblyString(kModule, error, context);
  ASSERT_TRUE(m) << error.getMessage().str();
  CompileOptions options;
  options.optLevel = 0;
  optimizeLLVMModule(*m, options, nullptr);
  std::string why;
  llvm::raw_string_ostream os(why);
  ASSERT_FALSE(llvm::verifyModule(*m, &os)) << why;

  llvm::Function *kernel = m->getFunction("__epl_kernel_0");
  ASSERT_TRUE(kernel);
  // %a and %k stay; %n is the constant 64 inside, %alloc is gone.
  ASSERT_EQ(kernel->arg_size(), 2u);
  EXPECT_EQ(kernel->getArg(0)->getName(), "a");
  EXPECT_EQ(kernel->getArg(1)->getName(), "k");
  bool addsConstant = false;
  for (llvm::Instruction &i : kernel->getEntryBlock())
    if (i.getOpcode() == llvm::Instruction::Add)
      if (auto *c = llvm::dyn_cast<llvm::ConstantInt>(i.getOperand(0)))
        addsConstant = c->getZExtValue() == 64;
  EXPECT_TRUE(addsConstant);
  unsigned calls = 0;
  for (llvm::User *user : kernel->users()) {
    auto *call = llvm::cast<llvm::CallInst>(user);
    EXPECT_EQ(call->arg_size(), 2u);
    ++calls;
  }
  EXPECT_EQ(calls, 2u);

  // Called through a pointer too: unchanged.
  EXPECT_EQ(m->getFunction("__epl_kernel_1")->arg_size(), 3u);
  // A global's address is not substituted.
  EXPECT_EQ(m->getFunction("__epl_kernel_2")->arg_size(), 1u);
}
} // namespace
