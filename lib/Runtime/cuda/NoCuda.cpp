//===- NoCuda.cpp - The runtime built without CUDA's headers --------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "Cuda.h"

using namespace epl::rt;

namespace {
[[noreturn]] void unavailable() {
  fatalError("--target cuda: this runtime was built without CUDA's headers");
}
} // namespace

bool cuda::driverFound(std::string &why) {
  why = "this runtime was built without CUDA's headers";
  return false;
}
bool cuda::available(std::string &why, bool) { return driverFound(why); }
void cuda::bindRank(int) { unavailable(); }
bool cuda::bound() { return false; }
bool cuda::hasMemoryPools() { unavailable(); }
void cuda::loadKernels() { unavailable(); }
std::array<uint8_t, 16> cuda::gpuUuid() { unavailable(); }
void *cuda::allocate(size_t) { unavailable(); }
void cuda::release(void *, size_t) { unavailable(); }
void cuda::copy(void *, const void *, size_t) { unavailable(); }
void cuda::setTF32(bool) {}
void cuda::setTimeout(double) {}
bool cuda::pin(void *, size_t) { return false; }
void cuda::unpin(void *) {}
void cuda::synchronize() { unavailable(); }
void *cuda::stream() { unavailable(); }
void *cuda::newSideStream() { unavailable(); }
void cuda::deleteSideStream(void *) { unavailable(); }
void cuda::sideStreamFollowsRank(void *) { unavailable(); }
void cuda::readBySideStream(const void *, size_t, void *) { unavailable(); }
void cuda::synchronizeAll() { unavailable(); }
void cuda::returnCachedMemory() { unavailable(); }
int cuda::deviceCount() { return 0; }
void cuda::loadNccl() {}
std::unique_ptr<Communicator> cuda::ncclFor(Communicator &, const Group &,
                                            std::string &why) {
  why = "this runtime was built without CUDA's headers";
  return nullptr;
}
void cuda::gemm(bool, bool, int64_t, int64_t, int64_t, const float *, int64_t,
                const float *, int64_t, float *, int64_t, bool, GemmBatch) {
  unavailable();
}
void cuda::gemm(bool, bool, int64_t, int64_t, int64_t, const double *, int64_t,
                const double *, int64_t, double *, int64_t, bool, GemmBatch) {
  unavailable();
}
std::unique_ptr<Communicator> cuda::stageThroughHost(Communicator &, int) {
  unavailable();
}

extern "C" {
void *mgpuModuleLoad(void *, size_t) { unavailable(); }
void *mgpuModuleLoadJIT(void *, int) { unavailable(); }
void mgpuModuleUnload(void *) {}
void *mgpuModuleGetFunction(void *, const char *) { unavailable(); }
void *mgpuStreamCreate() { unavailable(); }
void mgpuStreamDestroy(void *) {}
void mgpuStreamSynchronize(void *) {}
void mgpuLaunchKernel(void *, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t,
                      intptr_t, int32_t, void *, void **, void **, size_t) {
  unavailable();
}
void mgpuMemcpy(void *, void *, size_t, void *) { unavailable(); }
}
