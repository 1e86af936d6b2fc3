// RUN: epl-opt %S/Inputs/four-stages.mlir -split-input-file --epl-parallelize=devices=4 --epl-simulate-pipeline="forward=1 backward-input=2 backward-weight=0" -o /dev/null | FileCheck %s --check-prefix=WHOLE
// RUN: epl-opt %S/Inputs/four-stages.mlir -split-input-file --epl-parallelize=devices=4 --epl-simulate-pipeline="forward=1 backward-input=1 backward-weight=1" -o /dev/null | FileCheck %s --check-prefix=SPLIT
// RUN: epl-opt %S/Inputs/four-stages.mlir -split-input-file --epl-parallelize=devices=4 --epl-simulate-pipeline="forward=0.5 backward-input=1 backward-weight=0" -o /dev/null | FileCheck %s --check-prefix=CHUNKS
// RUN: not epl-opt %S/Inputs/four-stages.mlir -split-input-file --epl-simulate-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNPARTITIONED
// RUN: not epl-opt %S/Inputs/four-stages.mlir -split-input-file --epl-parallelize=devices=4 --epl-simulate-pipeline=forward=nan -o /dev/null 2>&1 | FileCheck %s --check-prefix=NAN
// RUN: not epl-opt %S/Inputs/four-stages.mlir -split-input-file --epl-parallelize=devices=4 --epl-simulate-pipeline=backward-weight=inf -o /dev/null 2>&1 | FileCheck %s --check-prefix=INF

// Forgetting to partition is an error, not an empty report.
// UNPARTITIONED: error: epl-simulate-pipeline: the module has no epl.pipeline to simulate; partition a model with stages first
// NAN: error: epl-simulate-pipeline: costs must be finite and not negative: F nan, B 1.00, W 1.00, send 0.00
// INF: error: epl-simulate-pipeline: costs must be finite and not negative: F 1.00, B 1.00, W INF, send 0.00

// The simulator on the stage programs epl-pipeline-partition writes for
// p = 4 stage devices and m = 8 micro-batches reproduces the closed forms.

// A backward in one piece (B = 2F, W = 0): GPipe and 1F1B idle (p - 1)(F + B)
// on every device, a bubble of (p - 1) / (m + p - 1) = 3/11 of the makespan
// 3 (m + p - 1) = 33. GPipe holds all 8 micro-batches, 1F1B p - s.
// WHOLE: pipeline @model: PreferForward, 4 stage devices, 4 stages, 8 micro-batches
// WHOLE-NEXT: makespan 33
// WHOLE-NEXT: device busy idle bubble peak in flight
// WHOLE-NEXT: 0 24 9 27.3% 8
// WHOLE-NEXT: 1 24 9 27.3% 8
// WHOLE-NEXT: 2 24 9 27.3% 8
// WHOLE-NEXT: 3 24 9 27.3% 8
// WHOLE: pipeline @model: PreferBackward, 4 stage devices, 4 stages, 8 micro-batches
// WHOLE-NEXT: makespan 33
// WHOLE-NEXT: device busy idle bubble peak in flight
// WHOLE-NEXT: 0 24 9 27.3% 4
// WHOLE-NEXT: 1 24 9 27.3% 3
// WHOLE-NEXT: 2 24 9 27.3% 2
// WHOLE-NEXT: 3 24 9 27.3% 1

// F = B = W: ZB-H1 idles p - 1 = 3 per device, a third of the 9 that 1F1B
// idles on the same work done in one piece, holding on every device the p
// micro-batches 1F1B holds on its first (a deferred W still reads them).
// SPLIT: pipeline @model: ZeroBubbleH1, 4 stage devices, 4 stages, 8 micro-batches
// SPLIT-NEXT: makespan 27
// SPLIT-NEXT: device busy idle bubble peak in flight
// SPLIT-NEXT: 0 24 3 11.1% 4
// SPLIT-NEXT: 1 24 3 11.1% 4
// SPLIT-NEXT: 2 24 3 11.1% 4
// SPLIT-NEXT: 3 24 3 11.1% 4

// Interleaved with v = 2 chunks per device, each chunk half a device's
// work: the bubble is 1F1B's divided by v, 9 / 2.
// CHUNKS: pipeline @model: Interleaved1F1B, 4 stage devices, 8 stages, 8 micro-batches
// CHUNKS-NEXT: makespan 28.5
// CHUNKS-NEXT: device busy idle bubble peak in flight
// CHUNKS-NEXT: 0 24 4.5 15.8%
// CHUNKS-NEXT: 1 24 4.5 15.8%
// CHUNKS-NEXT: 2 24 4.5 15.8%
// CHUNKS-NEXT: 3 24 4.5 15.8%
