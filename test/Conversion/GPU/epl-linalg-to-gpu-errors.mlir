// RUN: epl-opt %s --epl-linalg-to-gpu --split-input-file --verify-diagnostics
// RUN: not epl-opt %s --epl-linalg-to-gpu=threads-per-block=2048 2>&1 | FileCheck %s --check-prefix=THREADS
// THREADS: epl-linalg-to-gpu: threads-per-block must be between 1 and 1024, not 2048

// A kernel cannot call the host.
#id = affine_map<(i) -> (i)>
func.func private @host(f32)
func.func @calls_host(%a: memref<4xf32>, %b: memref<4xf32>) {
  // expected-error @+1 {{cannot run as a GPU kernel: its body calls a host function (@host)}}
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    // expected-note @+1 {{called here}}
    func.call @host(%x) : (f32) -> ()
    linalg.yield %x : f32
  }
  return
}

// -----

// Every thread would write the one element.
#m = affine_map<(i, k) -> (i, k)>
#k = affine_map<(i, k) -> (k)>
func.func @racy_result(%a: memref<4x8xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{cannot run as a GPU kernel: result 0 is not indexed by parallel loop d0, so several threads would write one element}}
  linalg.generic {indexing_maps = [#m, #k], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<4x8xf32>) outs(%b : memref<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  return
}

// -----

// A value the host reads from a buffer: the buffer is on the device.
func.func @host_reads(%a: memref<4xindex>) -> index {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{cannot run on the GPU target: it reads or writes a buffer on the host, where the step's buffers are not}}
  %n = memref.load %a[%c0] : memref<4xindex>
  return %n : index
}
