//===- StagePrograms.h - Reading the schedule of stage programs -*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// epl-pipeline-partition writes a pipelined step as one program per stage
// device whose body is the schedule, spelled out (calls tagged
// `epl.action`, sends and receives). This reads it back into the form the
// schedule simulator runs, so that what is checked and timed is the IR
// that runs, not the schedule it came from.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_DIALECT_EPL_TRANSFORMS_STAGEPROGRAMS_H
#define EPL_DIALECT_EPL_TRANSFORMS_STAGEPROGRAMS_H

#include "epl/PipelineSchedule/Simulate.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::epl {

/// The events of each stage program, in order: a compute per call with
/// `epl.action`, and its sends and receives (a receive matched to the
/// send of its stream it gets, in FIFO order). Fails with an error on the
/// op for a send of a value no action made, or a receive nobody sends.
FailureOr<pipeline::Program>
readStagePrograms(ArrayRef<func::FuncOp> stagePrograms, int64_t virtualStages);

/// The stages the programs' actions name (the largest index plus one).
int64_t virtualStagesOf(ArrayRef<func::FuncOp> stagePrograms);

/// Whether the messages of a pipeline's stage programs may go as NCCL
/// moves them (`grouped`, docs/gpu.md): every program messages (NCCL's
/// communicator for the stage group is made by all its members, when they
/// first message), and only in its body, not in a region (the simulator
/// reads the body); nothing that does work sits between the messages of a
/// run between two actions (the lowering groups adjacent messages); and the
/// programs finish under simulate() and checkGroupedRendezvous. Fails with
/// `error` saying why not (after readStagePrograms' own errors, if it
/// fails).
LogicalResult checkMessageGroups(ArrayRef<func::FuncOp> stagePrograms,
                                 int64_t virtualStages, std::string &error);

/// Whether the messages of a pipeline's stage programs may go over
/// channels (`direct`, docs/gpu.md): each program messages only in its
/// body, not in a region (its channels open when it starts, and the
/// simulator reads the body), and the programs finish under simulate()
/// and checkInOrderPerDirection. Fails with `error` saying why not.
LogicalResult checkChannels(ArrayRef<func::FuncOp> stagePrograms,
                            int64_t virtualStages, std::string &error);

} // namespace mlir::epl

#endif // EPL_DIALECT_EPL_TRANSFORMS_STAGEPROGRAMS_H
