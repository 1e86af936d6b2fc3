//===- GlibcCompat.cpp - epl-exec on an older glibc -----------------------===//
//
// Part of EPL-MLIR.
//
// epl-exec runs where the GPU is, whose glibc may be older than the build
// machine's (Debian 12's 2.36). LLVM's Support library, linked in
// statically for the runner core, draws random numbers (unique temporary
// names for atomic checkpoint writes) with arc4random where the build's
// glibc has it, which would make epl-exec need GLIBC_2.36 to start. This
// definition, in the executable, is the one the link binds instead: the
// same bytes from getrandom (glibc 2.25).
//
//===----------------------------------------------------------------------===//

#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <ctime>

extern "C" uint32_t arc4random(void) {
  uint32_t value;
  ssize_t got;
  do
    got = getrandom(&value, sizeof(value), 0);
  while (got < 0 && errno == EINTR);
  if (got == sizeof(value))
    return value;
  // No getrandom (a kernel before 3.17): names need only differ.
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint32_t>(now.tv_nsec) ^
         static_cast<uint32_t>(reinterpret_cast<uintptr_t>(&now));
}
