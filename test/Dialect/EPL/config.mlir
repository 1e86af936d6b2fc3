// RUN: epl-opt %s -split-input-file | epl-opt -split-input-file | FileCheck %s

// Every key EPL-MLIR understands, with a value of the right kind (the
// momentum optimizer's own key in the next module). Numeric keys take any
// integer or float attribute of the right kind.
// CHECK: module attributes {epl.config = {
// CHECK-DAG: amp.level = "O1"
// CHECK-DAG: amp.loss_scale = "dynamic"
// CHECK-DAG: auto.auto_parallel = false
// CHECK-DAG: cluster.colocate_split_and_replicate = true
// CHECK-DAG: communication.fp16 = true
// CHECK-DAG: communication.fp16_scale = 1.280000e+02 : f32
// CHECK-DAG: communication.gradients_reduce_method = "sum"
// CHECK-DAG: communication.max_splits = 2 : i32
// CHECK-DAG: gradient_checkpoint.type = "auto"
// CHECK-DAG: offload.level = "v0"
// CHECK-DAG: optimizer.beta1 = 0.899999976 : f32
// CHECK-DAG: optimizer.beta2 = 0.99899999999999999 : f64
// CHECK-DAG: optimizer.eps = 1.000000e-08 : f64
// CHECK-DAG: optimizer.lr = 1 : i64
// CHECK-DAG: optimizer.num_apply_group = 1 : i64
// CHECK-DAG: optimizer.type = "adamw"
// CHECK-DAG: optimizer.weight_decay = 0.00999999977 : f32
// CHECK-DAG: pipeline.num_micro_batch = 4 : i64
// CHECK-DAG: pipeline.strategy = "PreferForward"
// CHECK-DAG: zero.level = "v1"
module attributes {epl.config = {
    "pipeline.num_micro_batch" = 4 : i64,
    "pipeline.strategy" = "PreferForward",
    "gradient_checkpoint.type" = "auto",
    "zero.level" = "v1",
    "offload.level" = "v0",
    "amp.level" = "O1",
    "amp.loss_scale" = "dynamic",
    "communication.max_splits" = 2 : i32,
    "communication.fp16" = true,
    "communication.fp16_scale" = 128.0 : f32,
    "communication.gradients_reduce_method" = "sum",
    "cluster.colocate_split_and_replicate" = true,
    "optimizer.num_apply_group" = 1 : i64,
    "auto.auto_parallel" = false,
    "optimizer.type" = "adamw",
    "optimizer.lr" = 1 : i64,
    "optimizer.beta1" = 0.9 : f32,
    "optimizer.beta2" = 0.999 : f64,
    "optimizer.eps" = 1.0e-08 : f64,
    "optimizer.weight_decay" = 0.01 : f32}} {
}

// -----

// CHECK: module attributes {epl.config = {optimizer.momentum = 0.000000e+00 : f64, optimizer.type = "momentum"}}
module attributes {epl.config = {"optimizer.type" = "momentum", "optimizer.momentum" = 0.0 : f64}} {
}

// -----

// A numeric loss scale is as valid as "dynamic"; an empty string disables a
// feature, as in EPL.
// RUN: epl-opt %s -split-input-file | FileCheck %s --check-prefix=SPLIT
// SPLIT: amp.loss_scale = 1.024000e+03 : f64
// SPLIT-SAME: zero.level = ""
module attributes {epl.config = {"amp.loss_scale" = 1024.0 : f64, "zero.level" = ""}} {
}
