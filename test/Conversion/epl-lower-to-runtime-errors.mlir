// RUN: epl-opt %s --epl-lower-to-runtime --split-input-file -verify-diagnostics

epl.mesh @mesh ["data" = 2]
func.func @f(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  // expected-error @+1 {{'epl.all_reduce' op cannot run on the CPU runtime: it moves f32, f64, f16, i32 and i64 tensors, not 'bf16'}}
  %0 = epl.all_reduce %x on @mesh over ["data"] sum : tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

epl.mesh @mesh ["data" = 2]
func.func @f(%x: tensor<?x4xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'epl.all_gather' op cannot be lowered to the runtime with a dynamic shape ('tensor<?x4xf32>')}}
  %0 = epl.all_gather %x on @mesh over ["data"] dim 1 : tensor<?x4xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

epl.mesh @mesh ["data" = 2]
func.func @f(%x: tensor<4xi8>) -> tensor<4xi8> {
  // expected-error @+1 {{'epl.all_reduce' op cannot sum 'tensor<4xi8>' on the runtime: a narrow integer sum would overflow}}
  %y = epl.all_reduce %x on @mesh over ["data"] sum : tensor<4xi8>
  return %y : tensor<4xi8>
}

// -----

// Grouped messages outside a pipeline's stage programs: nothing checks
// their groups finish.
epl.mesh @pp ["stage" = 2]
func.func @relay(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'epl.recv' op is grouped outside the stage programs of an epl.pipeline (and a runner's copies of them), where nothing checks that its group finishes}}
  %r = epl.recv on @pp over ["stage"] from 0 grouped : tensor<4xf32>
  epl.send %r on @pp over ["stage"] to 1 grouped : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Untagged, the first message stage 0 sends (tag 0) is the first stage 1
// gets, though it asks for tag 1 first: an error, not swapped values.
epl.mesh @pp ["stage" = 2]
// expected-error @+1 {{'epl.pipeline' op has grouped messages that would not go as NCCL moves them (untagged, each send waiting for its receive, in groups between actions): device 1, event 0: the receive of F(stage 0, micro-batch 1) from device 0 (tag 1) would get the message of event 1 of device 0, F(stage 0, micro-batch 0) (tag 0): messages between two GPUs carry no tag}}
epl.pipeline @model on @pp over "stage" stages [@stage0, @stage1] strategy "PreferForward" micro_batches 2
func.func @stage0(%x: tensor<4xf32>) {
  %a = func.call @f(%x) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 0>} : (tensor<4xf32>) -> tensor<4xf32>
  epl.send %a on @pp over ["stage"] to 1 tag 0 grouped : tensor<4xf32>
  %b = func.call @f(%x) {epl.action = #epl.action<phase = forward, micro_batch = 1, stage = 0>} : (tensor<4xf32>) -> tensor<4xf32>
  epl.send %b on @pp over ["stage"] to 1 tag 1 grouped : tensor<4xf32>
  return
}
func.func @stage1() {
  %b = epl.recv on @pp over ["stage"] from 0 tag 1 grouped : tensor<4xf32>
  %a = epl.recv on @pp over ["stage"] from 0 tag 0 grouped : tensor<4xf32>
  return
}
func.func private @f(%x: tensor<4xf32>) -> tensor<4xf32>

// -----

// Between grouped messages with no action between them, an op that does
// work would split one group in two: in a stage program, the pipeline's
// check says so; in a copy of one (a runner's entry wrapper), bracketing
// does.
epl.mesh @pp ["stage" = 2]
// expected-error @+1 {{'epl.pipeline' op has grouped messages that would not go as NCCL moves them (untagged, each send waiting for its receive, in groups between actions): epl.all_reduce at}}
epl.pipeline @model on @pp over "stage" stages [@stage0, @stage1] strategy "PreferForward" micro_batches 1
func.func @stage0(%x: tensor<4xf32>) {
  %a = func.call @f(%x) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 0>} : (tensor<4xf32>) -> tensor<4xf32>
  epl.send %a on @pp over ["stage"] to 1 grouped : tensor<4xf32>
  %y = epl.all_reduce %x on @pp over ["stage"] sum : tensor<4xf32>
  %r = epl.recv on @pp over ["stage"] from 1 tag 1 grouped : tensor<4xf32>
  return
}
func.func @stage1() {
  %a = epl.recv on @pp over ["stage"] from 0 grouped : tensor<4xf32>
  %b = func.call @f(%a) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 1>} : (tensor<4xf32>) -> tensor<4xf32>
  epl.send %b on @pp over ["stage"] to 0 tag 1 grouped : tensor<4xf32>
  return
}
func.func private @f(%x: tensor<4xf32>) -> tensor<4xf32>

// -----

// A runner's copy of a stage program (epl.wraps) with its messages, and
// an op between two of them.
epl.mesh @pp ["stage" = 2]
epl.pipeline @model on @pp over "stage" stages [@stage0, @stage1] strategy "PreferForward" micro_batches 1
func.func @stage0(%x: tensor<4xf32>) {
  %a = func.call @f(%x) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 0>} : (tensor<4xf32>) -> tensor<4xf32>
  epl.send %a on @pp over ["stage"] to 1 grouped : tensor<4xf32>
  %g = epl.recv on @pp over ["stage"] from 1 tag 1 grouped : tensor<4xf32>
  %b = func.call @f(%g) {epl.action = #epl.action<phase = backward_input, micro_batch = 0, stage = 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return
}
func.func @stage1() {
  %a = epl.recv on @pp over ["stage"] from 0 grouped : tensor<4xf32>
  %b = func.call @f(%a) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 1>} : (tensor<4xf32>) -> tensor<4xf32>
  epl.send %b on @pp over ["stage"] to 0 tag 1 grouped : tensor<4xf32>
  return
}
func.func private @f(%x: tensor<4xf32>) -> tensor<4xf32>
func.func @entry(%x: tensor<4xf32>) attributes {epl.wraps = @stage0} {
  epl.send %x on @pp over ["stage"] to 1 grouped : tensor<4xf32>
  // expected-error @+1 {{'epl.all_reduce' op sits between grouped messages with no action between them (from epl.send at}}
  %y = epl.all_reduce %x on @pp over ["stage"] sum : tensor<4xf32>
  %r = epl.recv on @pp over ["stage"] from 1 tag 1 grouped : tensor<4xf32>
  return
}

// -----

// A copy whose messages are not the program's: nothing checked them.
epl.mesh @pp ["stage" = 2]
epl.pipeline @model on @pp over "stage" stages [@stage0, @stage1] strategy "PreferForward" micro_batches 1
func.func @stage0(%x: tensor<4xf32>) {
  %a = func.call @f(%x) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 0>} : (tensor<4xf32>) -> tensor<4xf32>
  epl.send %a on @pp over ["stage"] to 1 grouped : tensor<4xf32>
  // expected-note @+1 {{the program's message 1}}
  %g = epl.recv on @pp over ["stage"] from 1 tag 1 grouped : tensor<4xf32>
  %b = func.call @f(%g) {epl.action = #epl.action<phase = backward_input, micro_batch = 0, stage = 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return
}
func.func @stage1() {
  %a = epl.recv on @pp over ["stage"] from 0 grouped : tensor<4xf32>
  %b = func.call @f(%a) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 1>} : (tensor<4xf32>) -> tensor<4xf32>
  epl.send %b on @pp over ["stage"] to 0 tag 1 grouped : tensor<4xf32>
  return
}
func.func private @f(%x: tensor<4xf32>) -> tensor<4xf32>
func.func @entry(%x: tensor<4xf32>) attributes {epl.wraps = @stage0} {
  epl.send %x on @pp over ["stage"] to 1 grouped : tensor<4xf32>
  // expected-error @+1 {{@entry wraps @stage0 (epl.wraps) but its message 1 is not the program's}}
  %r = epl.recv on @pp over ["stage"] from 1 tag 2 grouped : tensor<4xf32>
  return
}

// -----

// A copy of a stage program relaying what it receives in one group: the
// relayed value is there only when the group is done.
epl.mesh @pp ["stage" = 2]
epl.pipeline @model on @pp over "stage" stages [@stage0, @stage1] strategy "PreferForward" micro_batches 1
func.func @stage0(%x: tensor<4xf32>) {
  %a = func.call @f(%x) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 0>} : (tensor<4xf32>) -> tensor<4xf32>
  epl.send %a on @pp over ["stage"] to 1 grouped : tensor<4xf32>
  %g = epl.recv on @pp over ["stage"] from 1 tag 1 grouped : tensor<4xf32>
  %b = func.call @f(%g) {epl.action = #epl.action<phase = backward_input, micro_batch = 0, stage = 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return
}
func.func @stage1() {
  %a = epl.recv on @pp over ["stage"] from 0 grouped : tensor<4xf32>
  %b = func.call @f(%a) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 1>} : (tensor<4xf32>) -> tensor<4xf32>
  epl.send %b on @pp over ["stage"] to 0 tag 1 grouped : tensor<4xf32>
  return
}
func.func private @f(%x: tensor<4xf32>) -> tensor<4xf32>
func.func @relay() attributes {epl.wraps = @stage1} {
  %r = epl.recv on @pp over ["stage"] from 0 grouped : tensor<4xf32>
  // expected-error @+1 {{'epl.send' op sends what a receive of its own group gets, which is there only when the group is done}}
  epl.send %r on @pp over ["stage"] to 0 tag 1 grouped : tensor<4xf32>
  return
}

// -----

// One group, two device groups: NCCL would post each one's messages as a
// group of their own.
epl.mesh @m ["stage" = 2, "x" = 2]
epl.pipeline @model on @m over "stage" stages [@stage0, @stage1] strategy "PreferForward" micro_batches 1
func.func @stage0(%x: tensor<4xf32>) {
  %a = func.call @f(%x) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 0>} : (tensor<4xf32>) -> tensor<4xf32>
  epl.send %a on @m over ["stage"] to 1 grouped : tensor<4xf32>
  // expected-error @+1 {{'epl.send' op is grouped with messages over another device group (from}}
  epl.send %a on @m over ["x"] to 1 tag 2 grouped : tensor<4xf32>
  return
}
func.func @stage1() {
  %a = epl.recv on @m over ["stage"] from 0 grouped : tensor<4xf32>
  %b = epl.recv on @m over ["x"] from 0 tag 2 grouped : tensor<4xf32>
  %c = func.call @f(%a) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 1>} : (tensor<4xf32>) -> tensor<4xf32>
  return
}
func.func private @f(%x: tensor<4xf32>) -> tensor<4xf32>

// -----

// A pipeline's messages go in groups or not at all.
epl.mesh @pp ["stage" = 2]
// expected-error @+1 {{'epl.pipeline' op groups 1 of its 2 messages: a pipeline's messages all go in groups, all directly, or all staged}}
epl.pipeline @model on @pp over "stage" stages [@stage0, @stage1] strategy "PreferForward" micro_batches 1
func.func @stage0(%x: tensor<4xf32>) {
  %a = func.call @f(%x) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 0>} : (tensor<4xf32>) -> tensor<4xf32>
  epl.send %a on @pp over ["stage"] to 1 grouped : tensor<4xf32>
  return
}
func.func @stage1() {
  %a = epl.recv on @pp over ["stage"] from 0 : tensor<4xf32>
  return
}
func.func private @f(%x: tensor<4xf32>) -> tensor<4xf32>

// -----

// Every stage device must message: NCCL's communicator for the stage group
// is made by all its members, when they first message.
epl.mesh @pp ["stage" = 2]
// expected-error @+1 {{'epl.pipeline' op has grouped messages that would not go as NCCL moves them (untagged, each send waiting for its receive, in groups between actions): stage program @stage1 sends and receives nothing}}
epl.pipeline @model on @pp over "stage" stages [@stage0, @stage1] strategy "PreferForward" micro_batches 1
func.func @stage0(%x: tensor<4xf32>) {
  %a = func.call @f(%x) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 0>} : (tensor<4xf32>) -> tensor<4xf32>
  epl.send %a on @pp over ["stage"] to 1 grouped : tensor<4xf32>
  return
}
func.func @stage1() { return }
func.func private @f(%x: tensor<4xf32>) -> tensor<4xf32>

// -----

// A message in a region is not read by the simulator: not groupable.
epl.mesh @pp ["stage" = 2]
// expected-error @+1 {{'epl.pipeline' op has grouped messages that would not go as NCCL moves them (untagged, each send waiting for its receive, in groups between actions): stage program @stage0 has a message in a region (epl.send at}}
epl.pipeline @model on @pp over "stage" stages [@stage0, @stage1] strategy "PreferForward" micro_batches 1
func.func @stage0(%x: tensor<4xf32>, %c: i1) {
  %a = func.call @f(%x) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 0>} : (tensor<4xf32>) -> tensor<4xf32>
  scf.if %c {
    epl.send %a on @pp over ["stage"] to 1 grouped : tensor<4xf32>
  }
  return
}
func.func @stage1() {
  %a = epl.recv on @pp over ["stage"] from 0 grouped : tensor<4xf32>
  return
}
func.func private @f(%x: tensor<4xf32>) -> tensor<4xf32>

// -----

// Direct messages outside a pipeline: nothing checks their order.
epl.mesh @pp ["stage" = 2]
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'epl.send' op is direct outside the stage programs of an epl.pipeline (and a runner's copies of them), where nothing checks that its channel gets its messages in order}}
  epl.send %x on @pp over ["stage"] to 1 direct : tensor<4xf32>
  return
}

// -----

// A channel carries no tag: the receives must take each direction's
// messages in the order they were sent.
epl.mesh @pp ["stage" = 2]
// expected-error @+1 {{'epl.pipeline' op has direct messages that would not go as channels move them (untagged, in the order sent, per direction): device 1, event 0: }}
epl.pipeline @model on @pp over "stage" stages [@stage0, @stage1] strategy "PreferForward" micro_batches 2
func.func @stage0(%x: tensor<4xf32>) {
  %a = func.call @f(%x) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 0>} : (tensor<4xf32>) -> tensor<4xf32>
  epl.send %a on @pp over ["stage"] to 1 tag 0 direct : tensor<4xf32>
  %b = func.call @f(%x) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 1>} : (tensor<4xf32>) -> tensor<4xf32>
  epl.send %b on @pp over ["stage"] to 1 tag 2 direct : tensor<4xf32>
  return
}
func.func @stage1() {
  %b = epl.recv on @pp over ["stage"] from 0 tag 2 direct : tensor<4xf32>
  %a = epl.recv on @pp over ["stage"] from 0 tag 0 direct : tensor<4xf32>
  return
}
func.func private @f(%x: tensor<4xf32>) -> tensor<4xf32>

// -----

// A pipeline's messages go directly all or none.
epl.mesh @pp ["stage" = 2]
// expected-error @+1 {{'epl.pipeline' op sends 1 directly of its 2 messages: a pipeline's messages all go in groups, all directly, or all staged}}
epl.pipeline @model on @pp over "stage" stages [@stage0, @stage1] strategy "PreferForward" micro_batches 1
func.func @stage0(%x: tensor<4xf32>) {
  %a = func.call @f(%x) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 0>} : (tensor<4xf32>) -> tensor<4xf32>
  epl.send %a on @pp over ["stage"] to 1 direct : tensor<4xf32>
  return
}
func.func @stage1() {
  %a = epl.recv on @pp over ["stage"] from 0 : tensor<4xf32>
  return
}
func.func private @f(%x: tensor<4xf32>) -> tensor<4xf32>

// -----

// A direct message in a region of a copy of a stage program (the runners'
// wrappers): its channel would open when the program starts, its message
// maybe never go.
epl.mesh @pp ["stage" = 2]
epl.pipeline @model on @pp over "stage" stages [@stage0, @stage1] strategy "PreferForward" micro_batches 1
func.func @stage0(%x: tensor<4xf32>) {
  %a = func.call @f(%x) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 0>} : (tensor<4xf32>) -> tensor<4xf32>
  epl.send %a on @pp over ["stage"] to 1 direct : tensor<4xf32>
  return
}
func.func @stage1() {
  %a = epl.recv on @pp over ["stage"] from 0 direct : tensor<4xf32>
  %b = func.call @f(%a) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 1>} : (tensor<4xf32>) -> tensor<4xf32>
  return
}
func.func private @f(%x: tensor<4xf32>) -> tensor<4xf32>
func.func @wrapper(%x: tensor<4xf32>, %c: i1) attributes {epl.wraps = @stage0} {
  scf.if %c {
    // expected-error @+1 {{'epl.send' op is direct in a region; a device's channels open when its program starts, and its direct messages are in the program's body}}
    epl.send %x on @pp over ["stage"] to 1 direct : tensor<4xf32>
  }
  return
}

// -----

// Outside the stage programs and the runners' copies of them (which say
// whose they are: epl.wraps), nothing checks a direct message's order.
epl.mesh @pp ["stage" = 2]
epl.pipeline @model on @pp over "stage" stages [@stage0, @stage1] strategy "PreferForward" micro_batches 1
func.func @stage0() { return }
func.func @stage1() { return }
func.func @other(%x: tensor<4xf32>) {
  // expected-error @+1 {{'epl.send' op is direct outside the stage programs of an epl.pipeline (and a runner's copies of them), where nothing checks that its channel gets its messages in order}}
  epl.send %x on @pp over ["stage"] to 1 direct : tensor<4xf32>
  return
}

// -----

// A call cycle would recurse without bound on the runner's stack.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{@f calls itself: a recursive function cannot run (nothing bounds how deep it goes)}}
  %r = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @a(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = func.call @b(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func @b(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = func.call @c(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func @c(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{@a calls @b, which calls @c, which calls it back: a recursive function cannot run (nothing bounds how deep it goes)}}
  %r = func.call @a(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
