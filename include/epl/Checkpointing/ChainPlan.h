//===- ChainPlan.h - Which activations to keep for the backward -*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// Gradient checkpointing on a chain, in plain C++ without MLIR:
// `epl-rematerialize` turns a training step into a chain of the activations
// its backward reads and asks which to keep.
//
// The model is Chen et al. 2016 ("Training Deep Nets with Sublinear Memory
// Cost"). Activations 0..n-1 come in forward order, each with its size and
// the cost of computing it again. A plan keeps some of them from the
// forward; the backward recomputes the others run by run (a run is a
// maximal sequence of activations not kept, recomputed from the kept one
// before it) and holds a run until its backward is done. So a plan needs
//
//   peak = sum of the kept sizes + the largest run's size sum
//
// bytes of activations at once (keeping all, or none, needs the sum of
// all sizes) and costs the sum of the costs of what it does not keep.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_CHECKPOINTING_CHAINPLAN_H
#define EPL_CHECKPOINTING_CHAINPLAN_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace mlir::epl::checkpointing {

struct ChainNode {
  /// Bytes the activation holds when kept.
  int64_t bytes = 0;
  /// What computing it again costs (any unit; the pass uses flops).
  double cost = 0;
  /// Bytes it holds in a run, while its run's backward runs; -1: `bytes`.
  /// (A value the backward does not read lives only until the next one is
  /// recomputed from it: 0.)
  int64_t runBytes = -1;

  int64_t bytesInRun() const { return runBytes < 0 ? bytes : runBytes; }
};

struct ChainPlan {
  /// Whether each node is kept from the forward.
  std::vector<bool> keep;
  int64_t peakBytes = 0;
  double recomputeCost = 0;
};

/// The peak activation bytes of `keep` on `nodes` (the model above).
int64_t peakBytes(llvm::ArrayRef<ChainNode> nodes,
                  const std::vector<bool> &keep);

/// The recompute cost of `keep` on `nodes`.
double recomputeCost(llvm::ArrayRef<ChainNode> nodes,
                     const std::vector<bool> &keep);

/// The least peak any plan reaches, with the cheapest plan that reaches it
/// (Chen's sqrt(n) checkpoints on equal nodes); on long chains, as
/// cheapestPlan, the least over the bounds tried.
ChainPlan leastMemoryPlan(llvm::ArrayRef<ChainNode> nodes);

/// The cheapest plan whose peak is at most `budget` bytes, or std::nullopt
/// when no plan fits (the budget is below leastMemoryPlan's peak). For each
/// bound on the largest run, a dynamic program over the chain keeps the
/// Pareto front of (kept bytes, kept cost) for each last kept node. Exact
/// on chains of up to 64 nodes; on longer ones the bound takes at most 32
/// values spread evenly over the runs' sizes and each front keeps 16
/// entries spread over its bytes, so that they are planned in about n^2
/// time (a plan that fits, not always the cheapest).
std::optional<ChainPlan> cheapestPlan(llvm::ArrayRef<ChainNode> nodes,
                                      int64_t budget);

} // namespace mlir::epl::checkpointing

#endif // EPL_CHECKPOINTING_CHAINPLAN_H
