//===- Shards.h - Splitting host tensors across devices ---------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// epl-run loads and saves global tensors; a per-device program takes and
// returns shards (`epl.shard`). These cut a global tensor into the shard of
// one rank, and put the shards of all ranks back together.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_RUNNER_SHARDS_H
#define EPL_RUNNER_SHARDS_H

#include "epl/Runner/Program.h"

#include "epl/Support/Safetensors.h"
#include "llvm/ADT/ArrayRef.h"

namespace mlir::epl {

/// The part of `global` that `rank` holds (ranks number the mesh
/// row-major). A whole shard is a copy.
HostTensor sliceShard(const HostTensor &global, const Shard &shard,
                      const MeshInfo &mesh, int rank);

/// Where `rank`'s block of a value with per-device shape `local` starts
/// along dimension `dim`, in elements of the global value.
int64_t shardOffset(const Shard &shard, const MeshInfo &mesh,
                    llvm::ArrayRef<int64_t> local, int rank, size_t dim);

/// The global tensor of shape `shape` (named and typed like `like`) whose
/// shards are `parts[r]` for each rank r of `ranks`, the ranks that hold
/// it (all, or a pipeline stage's); `parts` is indexed by rank.
HostTensor assembleShards(const HostTensor &like, llvm::ArrayRef<int64_t> shape,
                          const Shard &shard, const MeshInfo &mesh,
                          const std::vector<std::vector<char>> &parts,
                          llvm::ArrayRef<int> ranks);

} // namespace mlir::epl

#endif // EPL_RUNNER_SHARDS_H
