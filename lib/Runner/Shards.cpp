//===- Shards.cpp - Splitting host tensors across devices -----------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Runner/Shards.h"

#include <cstring>

using namespace mlir;
using llvm::ArrayRef;
using namespace mlir::epl;

namespace {
/// Offset of `rank`'s block along each dimension, in elements.
std::vector<int64_t> blockOffsets(const Shard &shard, const MeshInfo &mesh,
                                  ArrayRef<int64_t> local, int rank) {
  std::vector<int64_t> coords(mesh.sizes.size());
  for (int64_t a = static_cast<int64_t>(mesh.sizes.size()) - 1, r = rank;
       a >= 0; --a) {
    coords[a] = r % mesh.sizes[a];
    r /= mesh.sizes[a];
  }
  std::vector<int64_t> offsets(local.size(), 0);
  for (size_t d = 0; d < local.size() && d < shard.dimAxes.size(); ++d) {
    int64_t index = 0;
    for (int64_t axis : shard.dimAxes[d])
      index = index * mesh.sizes[axis] + coords[axis];
    offsets[d] = index * local[d];
  }
  return offsets;
}

/// Copies the block of `local` shape at `offsets` between a global buffer
/// and a local one, row by row.
void copyBlock(char *global, ArrayRef<int64_t> globalShape, char *local,
               ArrayRef<int64_t> localShape, ArrayRef<int64_t> offsets,
               size_t elementSize, bool toLocal) {
  int64_t rank = localShape.size();
  if (rank == 0) {
    toLocal ? std::memcpy(local, global, elementSize)
            : std::memcpy(global, local, elementSize);
    return;
  }
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < rank; ++d)
    rows *= localShape[d];
  size_t rowBytes = localShape[rank - 1] * elementSize;
  std::vector<int64_t> index(rank, 0);
  for (int64_t row = 0; row < rows; ++row) {
    int64_t g = 0;
    for (int64_t d = 0; d < rank; ++d)
      g = g * globalShape[d] + offsets[d] + index[d];
    char *gp = global + g * elementSize;
    char *lp = local + row * rowBytes;
    toLocal ? std::memcpy(lp, gp, rowBytes) : std::memcpy(gp, lp, rowBytes);
    for (int64_t d = rank - 2; d >= 0; --d) {
      if (++index[d] < localShape[d])
        break;
      index[d] = 0;
    }
  }
}

std::vector<int64_t> localShape(ArrayRef<int64_t> global, const Shard &shard,
                                const MeshInfo &mesh) {
  std::vector<int64_t> local(global.begin(), global.end());
  for (size_t d = 0; d < local.size() && d < shard.dimAxes.size(); ++d)
    for (int64_t axis : shard.dimAxes[d])
      local[d] /= mesh.sizes[axis];
  return local;
}
} // namespace

HostTensor mlir::epl::sliceShard(const HostTensor &global, const Shard &shard,
                                 const MeshInfo &mesh, int rank) {
  if (shard.isWhole())
    return global;
  HostTensor local = global;
  local.shape = localShape(global.shape, shard, mesh);
  size_t es = dtypeSize(global.dtype);
  local.data.assign(local.numElements() * es, 0);
  copyBlock(const_cast<char *>(global.data.data()), global.shape,
            local.data.data(), local.shape,
            blockOffsets(shard, mesh, local.shape, rank), es,
            /*toLocal=*/true);
  return local;
}

int64_t mlir::epl::shardOffset(const Shard &shard, const MeshInfo &mesh,
                               ArrayRef<int64_t> local, int rank, size_t dim) {
  if (shard.isWhole())
    return 0;
  return blockOffsets(shard, mesh, local, rank)[dim];
}

HostTensor
mlir::epl::assembleShards(const HostTensor &like, ArrayRef<int64_t> shape,
                          const Shard &shard, const MeshInfo &mesh,
                          const std::vector<std::vector<char>> &parts,
                          ArrayRef<int> ranks) {
  HostTensor global = like;
  global.shape.assign(shape.begin(), shape.end());
  size_t es = dtypeSize(like.dtype);
  if (shard.isWhole()) {
    global.data = parts[ranks.front()];
    return global;
  }
  global.data.assign(global.numElements() * es, 0);
  std::vector<int64_t> local = localShape(shape, shard, mesh);
  for (int rank : ranks)
    copyBlock(global.data.data(), global.shape,
              const_cast<char *>(parts[rank].data()), local,
              blockOffsets(shard, mesh, local, rank), es, /*toLocal=*/false);
  return global;
}
