//===- Initializers.cpp - Seeded parameters and synthetic data ------------===//
//
// Part of EPL-MLIR.
//
// One generator, documented in docs/epl-run.md so that anyone can reproduce
// it: each tensor draws from its own SplitMix64 stream seeded with
// `seed XOR FNV-1a(name)`, so adding a tensor never changes the others.
//
//===----------------------------------------------------------------------===//

#include "epl/Runner/Initializers.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace mlir::epl;

namespace {
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return (next() >> 11) * 0x1.0p-53; }
  /// Standard normal, Box-Muller (one value per two uniforms).
  double normal() {
    double u1 = 1.0 - uniform(); // (0, 1]
    double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }
};

uint64_t fnv1a(llvm::StringRef s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

template <typename T> void store(std::vector<char> &data, int64_t i, T v) {
  std::memcpy(data.data() + i * sizeof(T), &v, sizeof(T));
}

void storeNumber(HostTensor &t, int64_t i, double v) {
  switch (t.dtype) {
  case DType::F32:
    return store<float>(t.data, i, static_cast<float>(v));
  case DType::F64:
    return store<double>(t.data, i, v);
  case DType::I32:
    return store<int32_t>(t.data, i, static_cast<int32_t>(v));
  case DType::I64:
    return store<int64_t>(t.data, i, static_cast<int64_t>(v));
  default:
    return;
  }
}

bool isFloat(DType d) { return d == DType::F32 || d == DType::F64; }
} // namespace

HostTensor mlir::epl::initializeTensor(const EntryArg &arg, uint64_t seed) {
  HostTensor t;
  t.name = arg.name;
  t.dtype = *arg.dtype;
  t.shape = arg.shape;
  int64_t n = t.numElements();
  t.data.assign(n * dtypeSize(t.dtype), 0);
  SplitMix64 rng{seed ^ fnv1a(arg.name)};

  // Optimizer state starts at zero, as in PyTorch.
  if (arg.kind == ArgKind::OptState)
    return t;

  // Model state (running statistics) starts as its `epl.init` says, else
  // at zero.
  if (arg.kind == ArgKind::Param || arg.kind == ArgKind::State) {
    std::string init = arg.init;
    if (init.empty())
      init = t.shape.size() >= 2 && arg.kind == ArgKind::Param ? "normal"
                                                               : "zeros";
    if (init == "zeros")
      return t;
    if (init == "ones") {
      for (int64_t i = 0; i < n; ++i)
        storeNumber(t, i, 1.0);
      return t;
    }
    // normal(0, 1/sqrt(fan_in)); fan_in is what a contraction reduces
    // over, else every dimension but the last.
    int64_t fanIn = arg.fanIn;
    if (fanIn <= 0) {
      fanIn = 1;
      for (size_t d = 0; d + 1 < t.shape.size(); ++d)
        fanIn *= t.shape[d];
    }
    double std = 1.0 / std::sqrt(static_cast<double>(fanIn));
    for (int64_t i = 0; i < n; ++i)
      storeNumber(t, i, rng.normal() * std);
    return t;
  }

  if (!isFloat(t.dtype)) {
    // Class ids and other integers: uniform in [0, 10), or below the size
    // of what they index.
    uint64_t bound = arg.indexBound > 0 ? arg.indexBound : 10;
    for (int64_t i = 0; i < n; ++i)
      storeNumber(t, i, static_cast<double>(rng.next() % bound));
    return t;
  }
  if (arg.kind == ArgKind::Label && t.shape.size() == 2) {
    // One-hot rows: a class per example.
    int64_t classes = t.shape[1];
    for (int64_t row = 0; row < t.shape[0]; ++row)
      storeNumber(t, row * classes + static_cast<int64_t>(rng.next() % classes),
                  1.0);
    return t;
  }
  for (int64_t i = 0; i < n; ++i)
    storeNumber(t, i, rng.normal());
  return t;
}

std::vector<int64_t> mlir::epl::shuffledOrder(int64_t n, uint64_t seed,
                                              int epoch) {
  std::vector<int64_t> order(n);
  for (int64_t i = 0; i < n; ++i)
    order[i] = i;
  SplitMix64 rng{seed ^ fnv1a("shuffle/epoch" + std::to_string(epoch))};
  for (int64_t i = n - 1; i >= 1; --i)
    std::swap(order[i], order[rng.next() % static_cast<uint64_t>(i + 1)]);
  return order;
}
