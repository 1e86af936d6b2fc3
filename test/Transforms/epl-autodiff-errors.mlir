// RUN: epl-opt %s --epl-autodiff --split-input-file -verify-diagnostics

// expected-error @+1 {{epl-autodiff: the loss of @f (its first result) must be a scalar float tensor (tensor<f32>), not 'tensor<4xf32>'}}
func.func @f(%w: tensor<4xf32> {epl.arg = "param"}) -> tensor<4xf32> {
  return %w : tensor<4xf32>
}

// -----

// expected-error @+1 {{epl-autodiff: no model function (arguments tagged with epl.arg) in the module}}
module {
  func.func @f(%w: tensor<4xf32>) -> tensor<f32> {
    %e = tensor.empty() : tensor<f32>
    return %e : tensor<f32>
  }
}

// -----

func.func @f(%w: tensor<4xf32> {epl.arg = "param"}) -> tensor<f32> {
  %one = arith.constant 1.0 : f32
  %es = tensor.empty() : tensor<f32>
  %ones = linalg.fill ins(%one : f32) outs(%es : tensor<f32>) -> tensor<f32>
  // expected-error @+1 {{epl-autodiff: cannot differentiate a reduction that combines with 'arith.mulf'; sum, max and min are supported}}
  %p = linalg.reduce ins(%w : tensor<4xf32>) outs(%ones : tensor<f32>) dimensions = [0]
    (%v: f32, %acc: f32) {
      %m = arith.mulf %v, %acc : f32
      linalg.yield %m : f32
    }
  return %p : tensor<f32>
}

// -----

#id = affine_map<(i) -> (i)>
#none = affine_map<(i) -> ()>
func.func @f(%w: tensor<4xf32> {epl.arg = "param"}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  // expected-error @+1 {{epl-autodiff: cannot differentiate 'math.atan2' in the body of this op}}
  %r = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction"]}
      ins(%w : tensor<4xf32>) outs(%z : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = math.atan2 %v, %v : f32
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// A pad is differentiated when it pads with a constant, not with a value
// that depends on a parameter.
func.func @f(%w: tensor<4xf32> {epl.arg = "param"}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %first = tensor.extract %w[%c0] : tensor<4xf32>
  // expected-error @+1 {{epl-autodiff: cannot differentiate a tensor.pad whose padding value is not a constant or whose source shape is dynamic}}
  %p = tensor.pad %w low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %first : f32
  } : tensor<4xf32> to tensor<6xf32>
  %es = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %r = linalg.reduce ins(%p : tensor<6xf32>) outs(%z : tensor<f32>) dimensions = [0]
    (%v: f32, %acc: f32) {
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<f32>
}

// -----

module attributes {epl.config = {"pipeline.num_micro_batch" = 3 : i64}} {
  // expected-error @+1 {{cannot split a batch of 8 into 3 micro-batches (pipeline.num_micro_batch)}}
  func.func @f(%x: tensor<8x4xf32> {epl.arg = "input"}, %w: tensor<4xf32> {epl.arg = "param"}) -> tensor<f32> {
    %e = tensor.empty() : tensor<f32>
    return %e : tensor<f32>
  }
}

// -----

// 8x3 regrouped as 3x8: the micro-batch is a block of the leading 3 (said
// to be "a batch of 3", where the batch is 8).
module attributes {epl.config = {"pipeline.num_micro_batch" = 2 : i64}} {
  func.func @model(%x: tensor<8x3xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<8xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %c = tensor.collapse_shape %x [[0, 1]] : tensor<8x3xf32> into tensor<24xf32>
    // expected-error @+1 {{cannot split the batch of 8 into 2 micro-batches (pipeline.num_micro_batch) here: a reshape regroups it into dimension 0 of this value, of size 3, which 2 parts do not divide}}
    %e = tensor.expand_shape %c [[0, 1]] output_shape [3, 8] : tensor<24xf32> into tensor<3x8xf32>
    %e0 = tensor.empty() : tensor<f32>
    %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %s = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (b)>, affine_map<(a, b) -> ()>],
                         iterator_types = ["reduction", "reduction"]}
        ins(%e, %w : tensor<3x8xf32>, tensor<8xf32>) outs(%f0 : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %q = arith.mulf %p, %p : f32
      %r = arith.addf %acc, %q : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    return %s : tensor<f32>
  }
}

// -----

// A configuration under another name is read by nothing: the model would
// train with the defaults (a misspelt dialect, another framework's name).
// expected-error @+1 {{epl-autodiff: the module attribute 'elp.config' is not read: EPL's configuration is 'epl.config', so its keys would be ignored; rename it}}
module attributes {elp.config = {"optimizer.type" = "adam"}} {
  func.func @f(%w: tensor<4xf32> {epl.arg = "param"}) -> tensor<f32> {
    %e = tensor.empty() : tensor<f32>
    return %e : tensor<f32>
  }
}

// -----

// expected-error @+1 {{epl-autodiff: the module attribute 'tf.config' is not read}}
module attributes {tf.config = {}} {
  func.func @f(%w: tensor<4xf32> {epl.arg = "param"}) -> tensor<f32> {
    %e = tensor.empty() : tensor<f32>
    return %e : tensor<f32>
  }
}

// -----

// Other attributes are others' (torch-mlir's module name, a build's
// configuration's name, a dictionary of someone's settings).
module attributes {torch.debug_module_name = "Net", foo.build_config = "release", app.autoconfig = {level = 2 : i64}, epl.config = {}} {
  func.func @f(%w: tensor<4xf32> {epl.arg = "param"}) -> tensor<f32> {
    %e = tensor.empty() : tensor<f32>
    return %e : tensor<f32>
  }
}

// -----

// A key nothing implements yet is rejected, never ignored.
// expected-error @+1 {{epl-autodiff: EPL config key "amp.level" = "O1" is not implemented yet (automatic mixed precision); remove it or set it to its default ""}}
module attributes {epl.config = {"amp.level" = "O1"}} {
  func.func @f(%w: tensor<4xf32> {epl.arg = "param"}) -> tensor<f32> {
    %e = tensor.empty() : tensor<f32>
    return %e : tensor<f32>
  }
}

// -----

// expected-error @+1 {{epl-autodiff: EPL config key "amp.loss_scale" = 1.024000e+03 : f64 is not implemented yet (automatic mixed precision)}}
module attributes {epl.config = {"amp.loss_scale" = 1024.0 : f64}} {
  func.func @f(%w: tensor<4xf32> {epl.arg = "param"}) -> tensor<f32> {
    %e = tensor.empty() : tensor<f32>
    return %e : tensor<f32>
  }
}

// -----

// expected-error @+1 {{epl-autodiff: EPL config key "auto.auto_parallel" = true is not implemented yet (automatic parallelism); remove it or set it to its default false}}
module attributes {epl.config = {"auto.auto_parallel" = true}} {
  func.func @f(%w: tensor<4xf32> {epl.arg = "param"}) -> tensor<f32> {
    %e = tensor.empty() : tensor<f32>
    return %e : tensor<f32>
  }
}

// -----

// Defaults ask for nothing.
module attributes {epl.config = {"zero.level" = "", "optimizer.num_apply_group" = 1 : i64,
                                 "pipeline.strategy" = "PreferBackward", "amp.loss_scale" = "dynamic"}} {
  func.func @f(%w: tensor<4xf32> {epl.arg = "param"}) -> tensor<f32> {
    %c = arith.constant dense<0.0> : tensor<f32>
    return %c : tensor<f32>
  }
}

// -----

// Micro-batches would change a loss that uses a statistic over the batch
// (here the batch mean of h, subtracted from each example).
#bf = affine_map<(b, f) -> (b, f)>
#f = affine_map<(b, f) -> (f)>
#s = affine_map<(b, f) -> ()>
module attributes {epl.config = {"pipeline.num_micro_batch" = 2 : i64}} {
  func.func @f(%x: tensor<4x3xf32> {epl.arg = "input"},
               %w: tensor<3xf32> {epl.arg = "param"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x3xf32>
    %h = linalg.generic {indexing_maps = [#bf, #f, #bf], iterator_types = ["parallel", "parallel"]}
        ins(%x, %w : tensor<4x3xf32>, tensor<3xf32>) outs(%e : tensor<4x3xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %m = arith.mulf %a, %b : f32
      linalg.yield %m : f32
    } -> tensor<4x3xf32>
    %ef = tensor.empty() : tensor<3xf32>
    %zf = linalg.fill ins(%zero : f32) outs(%ef : tensor<3xf32>) -> tensor<3xf32>
    // expected-note @+1 {{the statistic over the whole batch is computed here}}
    %mu = linalg.generic {indexing_maps = [#bf, #f], iterator_types = ["reduction", "parallel"]}
        ins(%h : tensor<4x3xf32>) outs(%zf : tensor<3xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %q = arith.mulf %a, %a : f32
      %r = arith.addf %acc, %q : f32
      linalg.yield %r : f32
    } -> tensor<3xf32>
    // expected-error @+1 {{cannot split the batch into 2 micro-batches (pipeline.num_micro_batch): this op combines each example with a statistic over the whole batch; micro-batches reproduce only sums over the batch that reach the loss linearly}}
    %d = linalg.generic {indexing_maps = [#bf, #f, #bf], iterator_types = ["parallel", "parallel"]}
        ins(%h, %mu : tensor<4x3xf32>, tensor<3xf32>) outs(%e : tensor<4x3xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %m = arith.subf %a, %b : f32
      linalg.yield %m : f32
    } -> tensor<4x3xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [#bf, #s], iterator_types = ["reduction", "reduction"]}
        ins(%d : tensor<4x3xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %q = arith.mulf %a, %a : f32
      %r = arith.addf %acc, %q : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A max over the batch is not a sum of micro-batch maxima.
#bf = affine_map<(b, f) -> (b, f)>
#f = affine_map<(b, f) -> (f)>
#s = affine_map<(b, f) -> ()>
module attributes {epl.config = {"pipeline.num_micro_batch" = 2 : i64}} {
  func.func @f(%x: tensor<4x3xf32> {epl.arg = "input"},
               %w: tensor<3xf32> {epl.arg = "param"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x3xf32>
    %h = linalg.generic {indexing_maps = [#bf, #f, #bf], iterator_types = ["parallel", "parallel"]}
        ins(%x, %w : tensor<4x3xf32>, tensor<3xf32>) outs(%e : tensor<4x3xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %m = arith.mulf %a, %b : f32
      linalg.yield %m : f32
    } -> tensor<4x3xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    // expected-error @+1 {{cannot split the batch into 2 micro-batches (pipeline.num_micro_batch): this op reduces over the batch other than by a sum}}
    %l = linalg.generic {indexing_maps = [#bf, #s], iterator_types = ["reduction", "reduction"]}
        ins(%h : tensor<4x3xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.maximumf %acc, %a : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A constant added to the loss would be added once per micro-batch; a mean
// (a sum scaled by a constant) is fine.
#bf = affine_map<(b, f) -> (b, f)>
#f = affine_map<(b, f) -> (f)>
#s = affine_map<(b, f) -> ()>
#id = affine_map<() -> ()>
module attributes {epl.config = {"pipeline.num_micro_batch" = 2 : i64}} {
  func.func @f(%x: tensor<4x3xf32> {epl.arg = "input"},
               %w: tensor<3xf32> {epl.arg = "param"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %quarter = arith.constant 0.25 : f32
    %e = tensor.empty() : tensor<4x3xf32>
    %h = linalg.generic {indexing_maps = [#bf, #f, #bf], iterator_types = ["parallel", "parallel"]}
        ins(%x, %w : tensor<4x3xf32>, tensor<3xf32>) outs(%e : tensor<4x3xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %m = arith.mulf %a, %b : f32
      linalg.yield %m : f32
    } -> tensor<4x3xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    // expected-note @+1 {{the statistic over the whole batch is computed here}}
    %sum = linalg.generic {indexing_maps = [#bf, #s], iterator_types = ["reduction", "reduction"]}
        ins(%h : tensor<4x3xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %acc, %a : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    %mean = linalg.generic {indexing_maps = [#id, #id], iterator_types = []}
        ins(%sum : tensor<f32>) outs(%es : tensor<f32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.mulf %a, %quarter : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    // expected-error @+1 {{cannot split the batch into 2 micro-batches (pipeline.num_micro_batch): this op is not linear in a statistic over the whole batch}}
    %l = linalg.generic {indexing_maps = [#id, #id], iterator_types = []}
        ins(%mean : tensor<f32>) outs(%es : tensor<f32>) {
    ^bb0(%a: f32, %o: f32):
      %one = arith.constant 1.0 : f32
      %r = arith.addf %a, %one : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A parameter with one row per example would need its own slice per
// micro-batch: an error naming it, not an ill-typed step.
#id = affine_map<(i, j) -> (i, j)>
module attributes {epl.config = {"pipeline.num_micro_batch" = 2 : i64}} {
  func.func @f(%x: tensor<4x3xf32> {epl.arg = "input"},
               %w: tensor<4x3xf32> {epl.arg = "param", epl.name = "per_example"}) -> tensor<f32> {
    %e = tensor.empty() : tensor<4x3xf32>
    // expected-error @+1 {{cannot split the batch: param 'per_example' meets it here along its dimension 0 (one entry per example), but only inputs and labels are cut into micro-batches}}
    %h = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x, %w : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %m = arith.mulf %a, %b : f32
      linalg.yield %m : f32
    } -> tensor<4x3xf32>
    %c = tensor.collapse_shape %h [[0, 1]] : tensor<4x3xf32> into tensor<12xf32>
    %es = tensor.empty() : tensor<f32>
    %zero = arith.constant 0.0 : f32
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.reduce ins(%c : tensor<12xf32>) outs(%zs : tensor<f32>) dimensions = [0]
      (%v: f32, %acc: f32) {
        %s = arith.addf %v, %acc : f32
        linalg.yield %s : f32
      }
    return %l : tensor<f32>
  }
}

// -----

// Every value a body captures that depends on a parameter is either
// differentiated (a gather) or an error naming the op: never dropped.
func.func @f(%w: tensor<4xf32> {epl.arg = "param"}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  // expected-note @+1 {{the value is defined here}}
  %s = tensor.extract %w[%c0] : tensor<4xf32>
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  // expected-error @+1 {{epl-autodiff: cannot differentiate the body of this op: its 'arith.mulf' uses a value that depends on a parameter from outside the body; pass it as an input}}
  %r = linalg.generic {indexing_maps = [affine_map<(k) -> (k)>, affine_map<(k) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%w : tensor<4xf32>) outs(%f : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.mulf %a, %s : f32
    %sum = arith.addf %acc, %m : f32
    linalg.yield %sum : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// A gather nested deeper than the body (here in an scf.if) is not one the
// adjoint can follow.
func.func @f(%i: tensor<2xindex> {epl.arg = "input"},
             %w: tensor<4xf32> {epl.arg = "param"}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %c2 = arith.constant 2 : index
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  // expected-error @+1 {{epl-autodiff: cannot differentiate the body of this op: its 'tensor.extract' uses a value that depends on a parameter from outside the body}}
  %r = linalg.generic {indexing_maps = [affine_map<(k) -> (k)>, affine_map<(k) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%i : tensor<2xindex>) outs(%f : tensor<f32>) {
  ^bb0(%idx: index, %acc: f32):
    %small = arith.cmpi ult, %idx, %c2 : index
    %v = scf.if %small -> f32 {
      %x = tensor.extract %w[%idx] : tensor<4xf32>
      scf.yield %x : f32
    } else {
      scf.yield %zero : f32
    }
    %sum = arith.addf %acc, %v : f32
    linalg.yield %sum : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// An op with a region in a body that reads what the loss depends on has no
// derivative rule: an error, not a zero.
func.func @f(%w: tensor<4xf32> {epl.arg = "param"}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %true = arith.constant true
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  // expected-error @+1 {{epl-autodiff: cannot differentiate 'scf.if' in the body of this op}}
  %r = linalg.generic {indexing_maps = [affine_map<(k) -> (k)>, affine_map<(k) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%w : tensor<4xf32>) outs(%f : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %v = scf.if %true -> f32 {
      %d = arith.addf %a, %a : f32
      scf.yield %d : f32
    } else {
      scf.yield %zero : f32
    }
    %sum = arith.addf %acc, %v : f32
    linalg.yield %sum : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// A fill with a value that depends on a parameter: a scalar input has no
// tensor gradient to take; an error, never a zero.
func.func @f(%t: tensor<3xf32> {epl.arg = "param"}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %c1 = arith.constant 1 : index
  %s = tensor.extract %t[%c1] : tensor<3xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{epl-autodiff: cannot differentiate this op with respect to its scalar input #0, which depends on a parameter; make it a rank-0 tensor input}}
  %f = linalg.fill ins(%s : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %es = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %r = linalg.reduce ins(%f : tensor<4xf32>) outs(%z : tensor<f32>) dimensions = [0]
    (%v: f32, %acc: f32) {
      %sum = arith.addf %v, %acc : f32
      linalg.yield %sum : f32
    }
  return %r : tensor<f32>
}

// -----

// After the loss a model returns only the next values of its state.
// expected-error @+1 {{epl-autodiff: result 1 of @f is not model state; a model returns a scalar loss, then the next values of its state arguments (epl.result = "state")}}
func.func @f(%w: tensor<4xf32> {epl.arg = "param"}) -> (tensor<f32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<f32>
  return %e, %w : tensor<f32>, tensor<4xf32>
}

// -----

// Micro-batches would update the state once per micro-batch.
module attributes {epl.config = {"pipeline.num_micro_batch" = 2 : i64}} {
  // expected-error @+1 {{epl-autodiff: @f updates model state ('bn/mean'), which micro-batches and pipeline stages do not carry; train it with one micro-batch and stage}}
  func.func @f(%x: tensor<4xf32> {epl.arg = "input"},
               %m: tensor<4xf32> {epl.arg = "state", epl.name = "bn/mean"})
      -> (tensor<f32>, tensor<4xf32> {epl.result = "state", epl.name = "bn/mean"}) {
    %e = tensor.empty() : tensor<f32>
    return %e, %m : tensor<f32>, tensor<4xf32>
  }
}

// -----

// An input without a batch (positions shared by the examples) is cut along
// its dimension 0 too: the error names it and what to make it instead.
#bsd = affine_map<(b, s, d) -> (b, s, d)>
#sd = affine_map<(b, s, d) -> (s, d)>
#none = affine_map<(b, s, d) -> ()>
module attributes {epl.config = {"pipeline.num_micro_batch" = 2 : i64}} {
  func.func @f(%x: tensor<4x3x2xf32> {epl.arg = "input", epl.name = "x"},
               %pos: tensor<3x2xf32> {epl.arg = "input", epl.name = "pos"},
               %w: tensor<2xf32> {epl.arg = "param"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x3x2xf32>
    // expected-error @+1 {{cannot split the batch through this op: its operands batch different loops (input 'x' along its dimension 0, input 'pos' along its dimension 0); every input and label is cut into micro-batches along its dimension 0, so one that holds no batch (a mask or positions shared by the examples) is model state instead: a parameter that is not trained (epl.param(..., trainable=False); in PyTorch, a buffer or a parameter with requires_grad=False), or a constant}}
    %h = linalg.generic {indexing_maps = [#bsd, #sd, #bsd], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%x, %pos : tensor<4x3x2xf32>, tensor<3x2xf32>) outs(%e : tensor<4x3x2xf32>) {
    ^bb0(%a: f32, %p: f32, %o: f32):
      %s = arith.addf %a, %p : f32
      linalg.yield %s : f32
    } -> tensor<4x3x2xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [#bsd, #none], iterator_types = ["reduction", "reduction", "reduction"]}
        ins(%h : tensor<4x3x2xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %acc, %a : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// An input read along its dimension 0 at a shifted position (a window over
// a shared sequence, no batch in it): the error names the input and what
// to make it instead.
#row = affine_map<(b, s) -> (b, s)>
#shifted = affine_map<(b, s) -> (s + 1)>
#all = affine_map<(b, s) -> ()>
module attributes {epl.config = {"pipeline.num_micro_batch" = 2 : i64}} {
  func.func @f(%x: tensor<4x3xf32> {epl.arg = "input", epl.name = "x"},
               %seq: tensor<4xf32> {epl.arg = "input", epl.name = "seq"},
               %w: tensor<f32> {epl.arg = "param"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    // expected-error @+1 {{cannot split the batch: this op does not keep dimension 0 of input 'seq' as a dimension (it is indexed by an expression, or joined along); every input and label is cut into micro-batches along its dimension 0, so one that holds no batch (a mask or positions shared by the examples) is model state instead: a parameter that is not trained (epl.param(..., trainable=False); in PyTorch, a buffer or a parameter with requires_grad=False), or a constant}}
    %l = linalg.generic {indexing_maps = [#row, #shifted, #all, #all], iterator_types = ["reduction", "reduction"]}
        ins(%x, %seq, %w : tensor<4x3xf32>, tensor<4xf32>, tensor<f32>) outs(%zs : tensor<f32>) {
    ^bb0(%a: f32, %p: f32, %v: f32, %acc: f32):
      %m = arith.mulf %a, %p : f32
      %n = arith.mulf %m, %v : f32
      %r = arith.addf %acc, %n : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Class weights passed as an input, unsqueezed as torch's weighted
// cross-entropy does: the error names the input under its reshape.
module attributes {epl.config = {"pipeline.num_micro_batch" = 2 : i64}} {
  func.func @f(%x: tensor<4x3xf32> {epl.arg = "input", epl.name = "x"},
               %cw: tensor<3xf32> {epl.arg = "input", epl.name = "class_weights"},
               %w: tensor<f32> {epl.arg = "param"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %row = tensor.expand_shape %cw [[0, 1]] output_shape [1, 3] : tensor<3xf32> into tensor<1x3xf32>
    // expected-error @+1 {{cannot split the batch through this op: its operands batch different loops (input 'x' along its dimension 0, input 'class_weights', reshaped to tensor<1x3xf32>, along its dimension 1); every input and label is cut into micro-batches}}
    %l = linalg.generic {indexing_maps = [affine_map<(b, c) -> (b, c)>, affine_map<(b, c) -> (0, c)>,
                                          affine_map<(b, c) -> ()>, affine_map<(b, c) -> ()>],
                         iterator_types = ["reduction", "reduction"]}
        ins(%x, %row, %w : tensor<4x3xf32>, tensor<1x3xf32>, tensor<f32>) outs(%zs : tensor<f32>) {
    ^bb0(%a: f32, %p: f32, %v: f32, %acc: f32):
      %m = arith.mulf %a, %p : f32
      %n = arith.mulf %m, %v : f32
      %r = arith.addf %acc, %n : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A batched input read inside the region of an op that has no sharding
// rule (scf.if): a micro-batch would read its own rows at the whole
// batch's positions (row 3 of 2).
module attributes {epl.config = {"pipeline.num_micro_batch" = 2 : i64}} {
  func.func @f(%x: tensor<4x3xf32> {epl.arg = "input", epl.name = "x"},
               %flag: tensor<i1> {epl.arg = "input", epl.name = "flag"},
               %w: tensor<f32> {epl.arg = "param"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %c0 = arith.constant 0 : index
    %c3 = arith.constant 3 : index
    %cond = tensor.extract %flag[] : tensor<i1>
    // expected-error @+1 {{cannot split the batch: this op reads input 'x' inside its region, at positions of the whole batch}}
    %s = scf.if %cond -> f32 {
      %v = tensor.extract %x[%c3, %c0] : tensor<4x3xf32>
      scf.yield %v : f32
    } else {
      scf.yield %zero : f32
    }
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(b, j) -> (b, j)>, affine_map<(b, j) -> ()>, affine_map<(b, j) -> ()>],
                         iterator_types = ["reduction", "reduction"]}
        ins(%x, %w : tensor<4x3xf32>, tensor<f32>) outs(%zs : tensor<f32>) {
    ^bb0(%a: f32, %v: f32, %acc: f32):
      %m = arith.mulf %a, %v : f32
      %n = arith.mulf %m, %s : f32
      %r = arith.addf %acc, %n : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A parameter read through a cast to a dynamic size by an op whose loops
// run over it (an L2 penalty): adjoints are built over static loops.
module {
  func.func @f(%w: tensor<4xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %wd = tensor.cast %w : tensor<4xf32> to tensor<?xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    // expected-error @+1 {{epl-autodiff: cannot differentiate an op whose loops run over a dimension of dynamic size; cast its operands to static shapes}}
    %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
        ins(%wd : tensor<?xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %m = arith.mulf %a, %a : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// torch's max(dim): the values and their indices in one reduction. The
// message says how to write it so that it is differentiated.
func.func @f(%w: tensor<4x3xf32> {epl.arg = "param"}) -> tensor<f32> {
  %lowest = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0 : i64
  %z = arith.constant 0.0 : f32
  %ev = tensor.empty() : tensor<4xf32>
  %ei = tensor.empty() : tensor<4xi64>
  %v0 = linalg.fill ins(%lowest : f32) outs(%ev : tensor<4xf32>) -> tensor<4xf32>
  %i0 = linalg.fill ins(%zero : i64) outs(%ei : tensor<4xi64>) -> tensor<4xi64>
  // expected-error @+1 {{epl-autodiff: cannot differentiate a linalg.generic with 2 results: result 1 ('tensor<4xi64>') holds indices, as torch's max(dim) and min(dim) return beside the values; take the indices alone (i = x.argmax(dim)) and the values as a gather at them (x.gather(dim, i.unsqueeze(dim))), which are differentiated}}
  %m:2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%w : tensor<4x3xf32>) outs(%v0, %i0 : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%x: f32, %best: f32, %at: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %gt = arith.cmpf ogt, %x, %best : f32
    %v = arith.select %gt, %x, %best : f32
    %i = arith.select %gt, %ji, %at : i64
    linalg.yield %v, %i : f32, i64
  } -> (tensor<4xf32>, tensor<4xi64>)
  %es = tensor.empty() : tensor<f32>
  %s0 = linalg.fill ins(%z : f32) outs(%es : tensor<f32>) -> tensor<f32>
  // (The indices are read, as a routing reads them.)
  %s = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%m#0, %m#1 : tensor<4xf32>, tensor<4xi64>) outs(%s0 : tensor<f32>) {
  ^bb0(%v: f32, %i: i64, %acc: f32):
    %f = arith.sitofp %i : i64 to f32
    %p = arith.mulf %v, %f : f32
    %t = arith.addf %acc, %p : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// A reshape that regroups a batch merged below another dimension
// (seq-first (4, 8) -> (32) -> (16, 2)): no dimension holds whole
// examples, so no micro-batch is a part of one.
#cut2 = affine_map<(i, j) -> (i, j)>
#cutnone = affine_map<(i, j) -> ()>
module attributes {epl.config = {"pipeline.num_micro_batch" = 2 : i64}} {
  func.func @f(%x: tensor<8x4xf32> {epl.arg = "input", epl.name = "x"},
               %w: tensor<f32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %e = tensor.empty() : tensor<4x8xf32>
    %t = linalg.transpose ins(%x : tensor<8x4xf32>) outs(%e : tensor<4x8xf32>) permutation = [1, 0]
    %c = tensor.collapse_shape %t [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
    // expected-error @+1 {{cannot split the batch: this op cuts dimension 0 of a value of type tensor<32xf32> across its batch of 8 (a reshape whose groups divide the examples)}}
    %r = tensor.expand_shape %c [[0, 1]] output_shape [16, 2] : tensor<32xf32> into tensor<16x2xf32>
    %zero = arith.constant 0.0 : f32
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [#cut2, #cutnone, #cutnone], iterator_types = ["reduction", "reduction"]}
        ins(%r, %w : tensor<16x2xf32>, tensor<f32>) outs(%zs : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A batched value made by an op without a sharding rule (a position table
// by tensor.generate): each micro-batch would make the first rows of the
// whole batch's, silently.
#gen2 = affine_map<(i, j) -> (i, j)>
#gennone = affine_map<(i, j) -> ()>
module attributes {epl.config = {"pipeline.num_micro_batch" = 2 : i64}} {
  func.func @f(%x: tensor<8x4xf32> {epl.arg = "input", epl.name = "x"},
               %w: tensor<f32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    // expected-error @+1 {{cannot split the batch through 'tensor.generate': it makes a batched value without a sharding rule saying how, so each micro-batch would make the first rows of the whole batch's (a micro-batch holds only its rows; compute it with linalg ops over the batch, or without micro-batches)}}
    %pos = tensor.generate {
    ^bb0(%i: index, %j: index):
      %ii = arith.index_cast %i : index to i64
      %p = arith.sitofp %ii : i64 to f32
      tensor.yield %p : f32
    } : tensor<8x4xf32>
    %zero = arith.constant 0.0 : f32
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [#gen2, #gen2, #gennone, #gennone], iterator_types = ["reduction", "reduction"]}
        ins(%x, %pos, %w : tensor<8x4xf32>, tensor<8x4xf32>, tensor<f32>) outs(%zs : tensor<f32>) {
    ^bb0(%a: f32, %p: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %p : f32
      %n = arith.mulf %m, %b : f32
      %s = arith.addf %acc, %n : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}
