//===- Autodiff.cpp - The training step of an L0 model --------------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/IR/EPLAttrs.h"
#include "epl/Dialect/EPL/IR/EPLConfig.h"
#include "epl/Dialect/EPL/IR/EPLDialect.h"
#include "epl/Dialect/EPL/IR/EPLOps.h"
#include "epl/Dialect/EPL/IR/ShardingRule.h"
#include "epl/Dialect/EPL/Transforms/BatchSplitting.h"
#include "epl/Dialect/EPL/Transforms/Passes.h"
#include "epl/Dialect/EPL/Transforms/ScalarDerivatives.h"
#include "epl/Dialect/EPL/Transforms/TrainingStep.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

#define DEBUG_TYPE "epl-autodiff"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLAUTODIFFPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;
using namespace mlir::epl;

namespace {
/// Tags the ops a builder inserts into the step's body with their phase and
/// forward origin (ops nested in linalg bodies stay untagged).
struct PhaseTagger : public OpBuilder::Listener {
  Block *stepBody = nullptr;
  Phase phase = Phase::Forward;
  std::optional<int64_t> origin;
  /// The pipeline stage of the forward origin: its backward runs there.
  Attribute stage;
  int64_t count = 0;

  void notifyOperationInserted(Operation *op,
                               OpBuilder::InsertPoint previous) override {
    if (op->getBlock() != stepBody || op->hasTrait<OpTrait::IsTerminator>())
      return;
    MLIRContext *ctx = op->getContext();
    op->setAttr(EPLDialect::kPhaseAttrName, PhaseAttr::get(ctx, phase));
    if (origin)
      op->setAttr(EPLDialect::kOriginAttrName,
                  IntegerAttr::get(IntegerType::get(ctx, 64), *origin));
    if (origin && stage)
      op->setAttr(EPLDialect::kStageAttrName, stage);
    ++count;
  }
};

/// Keeps the user's strategy on ops that normalization rewrites (a named
/// op generalized, softmax decomposed, tensor arith made linalg): the ops
/// that replace one inherit its scope and pipeline stage, and the op making
/// its result its gradient checkpoint mark.
struct InheritStrategy : public RewriterBase::Listener {
  SmallVector<Operation *> inserted;

  void notifyOperationInserted(Operation *op,
                               OpBuilder::InsertPoint previous) override {
    inserted.push_back(op);
  }
  void notifyOperationReplaced(Operation *op, ValueRange values) override {
    for (Value v : values)
      if (Operation *def = v.getDefiningOp())
        inserted.push_back(def);
    for (Operation *to : inserted)
      // Ops nested in the new ops' bodies belong to them, untagged.
      for (StringRef name :
           {EPLDialect::kScopeAttrName, EPLDialect::kStageAttrName})
        if (Attribute a = op->getAttr(name);
            a && to->getBlock() == op->getBlock() && !to->hasAttr(name))
          to->setAttr(name, a);
    // A kept tensor stays kept: the op that now makes it is marked, not
    // the ops nested in it (conversions copy attributes into bodies).
    if (op->hasAttr(EPLDialect::kCheckpointAttrName)) {
      for (Operation *to : inserted)
        to->walk([](Operation *nested) {
          nested->removeAttr(EPLDialect::kCheckpointAttrName);
        });
      for (Value v : values)
        if (Operation *def = v.getDefiningOp();
            def && def->getBlock() == op->getBlock())
          def->setAttr(EPLDialect::kCheckpointAttrName,
                       UnitAttr::get(op->getContext()));
    }
    inserted.clear();
  }
};

enum class Combiner { None, Sum, Max, Min };

/// What the adjoint of a linalg.generic needs to know of it: its body as
/// `acc (+|-|max|min) target(inputs)` when it reduces, else `target`.
struct GenericForm {
  /// Mutable: an op handle's accessors are not const.
  mutable linalg::GenericOp op;
  Block *body;
  unsigned numInputs;
  BlockArgument acc;
  Value out, init, target;
  SmallVector<AffineMap> maps;
  AffineMap outMap;
  SmallVector<utils::IteratorType> iterators;
  bool reduces = false, subtracts = false, initRead = false;
  Combiner combiner = Combiner::None;
  /// `tensor.extract`s in the body reading a parameter-dependent tensor
  /// from outside.
  SmallVector<tensor::ExtractOp> gathers;
  /// Of a max (min): the tie count, made once for all its adjoints.
  mutable Value ties;
};

bool isFloatTensor(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && isa<FloatType>(type.getElementType());
}

/// Builds the training step of one L0 function, in place.
class StepBuilder {
public:
  explicit StepBuilder(func::FuncOp fn) : fn(fn), b(fn.getContext()) {
    tagger.stepBody = &fn.front();
    b.setListener(&tagger);
  }

  LogicalResult run(int64_t &numForward, int64_t &numBackward);

  /// Builds the step of `fn` (prepared) as a loop over `parts` micro-batches
  /// of `micro`, the gradient function of one micro-batch (see
  /// `splitBatch`).
  LogicalResult runAccumulating(func::FuncOp micro, int64_t parts,
                                bool sumGradients, ArrayRef<Value> statistics);

  LogicalResult checkSignature();
  LogicalResult prepare();

private:
  void analyzeActivity();
  void tagHoistedOps();
  LogicalResult backward();
  LogicalResult adjointOf(Operation *op);
  LogicalResult genericAdjoint(linalg::GenericOp op);
  FailureOr<GenericForm> analyzeGeneric(linalg::GenericOp op);
  LogicalResult gradientThrough(const GenericForm &g, Value dout,
                                BlockArgument wrt, Value forward,
                                AffineMap wrtMap);
  LogicalResult gatherAdjoint(const GenericForm &g, Value dout,
                              tensor::ExtractOp gather);
  Value tiesOf(const GenericForm &g);
  AffineMap throughWindows(const GenericForm &g, struct BackwardInputs &in,
                           BlockArgument wrt, AffineMap wrtMap,
                           ArrayRef<struct Window> windows,
                           RankedTensorType type);
  LogicalResult finish();

  /// Adds `contribution` to the gradient of `forward`.
  void accumulate(Value forward, Value contribution);
  /// Zeros of a static `type`.
  Value zerosLike(Type type);
  /// Zeros shaped like `like`, its dynamic sizes read off it: a table
  /// reached through a cast to `tensor<?x...>` still gets its gradient.
  Value zerosLike(Value like);
  Value zeroFill(Value empty);
  Value gradientOrZeros(Value forward) {
    Value g = grads.lookup(forward);
    return g ? g : zerosLike(forward);
  }
  /// Phase of a gradient flowing into `forward`.
  Phase phaseFor(Value forward) const {
    return dataDependent.contains(forward) ? Phase::BackwardInput
                                           : Phase::BackwardWeight;
  }

  func::FuncOp fn;
  OpBuilder b;
  PhaseTagger tagger;
  llvm::DenseMap<Value, Value> grads;
  /// Values that depend on a parameter, and values that depend on data.
  llvm::DenseSet<Value> varied, dataDependent;
  llvm::DenseMap<Operation *, int64_t> ids;
};

LogicalResult StepBuilder::checkSignature() {
  if (!fn.getBody().hasOneBlock())
    return fn.emitError() << "epl-autodiff: @" << fn.getSymName()
                          << " must be a single block of tensor ops";
  if (fn.getNumResults() == 0)
    return fn.emitError() << "epl-autodiff: @" << fn.getSymName()
                          << " returns nothing; a model returns a scalar loss";
  // The loss first: a model returning a value before it is told that.
  auto loss = dyn_cast<RankedTensorType>(fn.getResultTypes()[0]);
  if (!loss || loss.getRank() != 0 || !isa<FloatType>(loss.getElementType()))
    return fn.emitError() << "epl-autodiff: the loss of @" << fn.getSymName()
                          << " (its first result) must be a scalar float "
                             "tensor (tensor<f32>), not "
                          << fn.getResultTypes()[0];
  // After the loss, only the next values of model state (batch norm's
  // running statistics): anything else would be dropped from the step.
  for (unsigned i = 1; i < fn.getNumResults(); ++i) {
    auto kind =
        fn.getResultAttrOfType<StringAttr>(i, EPLDialect::kResultAttrName);
    if (!kind || kind.getValue() != "state")
      return fn.emitError()
             << "epl-autodiff: result " << i << " of @" << fn.getSymName()
             << " is not model state; a model returns a scalar loss, then "
                "the next values of its state arguments (epl.result = "
                "\"state\")";
  }
  return success();
}

/// What the yields of results `kept` of `op` need within its body: values
/// and block arguments (ops without results, cf.assert, keep theirs).
static llvm::DenseSet<Value> neededBy(linalg::GenericOp op,
                                      ArrayRef<unsigned> kept) {
  Block *body = op.getBlock();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  llvm::DenseSet<Value> needed;
  SmallVector<Value> worklist;
  for (unsigned i : kept)
    worklist.push_back(yield.getOperand(i));
  for (Operation &nested : body->without_terminator())
    if (nested.getNumResults() == 0)
      llvm::append_range(worklist, nested.getOperands());
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (!needed.insert(v).second)
      continue;
    if (Operation *def = v.getDefiningOp(); def && def->getBlock() == body)
      llvm::append_range(worklist, def->getOperands());
  }
  return needed;
}

/// A generic computing results `kept` of `op` alone (their inits, maps and
/// the body ops they need), at `op`, its uses not replaced.
static linalg::GenericOp cloneWithResults(linalg::GenericOp op,
                                          ArrayRef<unsigned> kept,
                                          RewriterBase &rewriter) {
  unsigned numInputs = op.getNumDpsInputs();
  Block *body = op.getBlock();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  llvm::DenseSet<Value> needed = neededBy(op, kept);
  SmallVector<Value> inits;
  SmallVector<AffineMap> allMaps = op.getIndexingMapsArray();
  SmallVector<AffineMap> maps(allMaps.begin(), allMaps.begin() + numInputs);
  for (unsigned i : kept) {
    inits.push_back(op.getDpsInitOperand(i)->get());
    maps.push_back(allMaps[numInputs + i]);
  }
  rewriter.setInsertionPoint(op);
  auto slim = linalg::GenericOp::create(
      rewriter, op.getLoc(), ValueRange(inits).getTypes(), op.getDpsInputs(),
      inits, maps, op.getIteratorTypesArray(),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        IRMapping map;
        for (unsigned j = 0; j < numInputs; ++j)
          map.map(body->getArgument(j), args[j]);
        for (auto [k, i] : llvm::enumerate(kept))
          map.map(body->getArgument(numInputs + i), args[numInputs + k]);
        for (Operation &nested : body->without_terminator())
          if (nested.getNumResults() == 0 ||
              llvm::any_of(nested.getResults(),
                           [&](Value r) { return needed.contains(r); }))
            nb.clone(nested, map);
        SmallVector<Value> yields;
        for (unsigned i : kept)
          yields.push_back(map.lookupOrDefault(yield.getOperand(i)));
        linalg::YieldOp::create(nb, nl, yields);
      });
  slim->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  return slim;
}

/// Drops the results of a linalg.generic nothing uses, when the others do
/// not depend on them: torch-mlir's max reductions also compute an argmax
/// nobody reads, and only single-result generics have an adjoint. Returns
/// the generic that is left.
static linalg::GenericOp dropDeadResults(linalg::GenericOp op,
                                         RewriterBase &rewriter) {
  unsigned numInputs = op.getNumDpsInputs();
  SmallVector<unsigned> kept;
  for (OpResult r : op->getResults())
    if (!r.use_empty())
      kept.push_back(r.getResultNumber());
  if (kept.size() == op->getNumResults() || kept.empty())
    return op;
  llvm::DenseSet<Value> needed = neededBy(op, kept);
  for (OpResult r : op->getResults())
    if (r.use_empty() && needed.contains(op.getBlock()->getArgument(
                             numInputs + r.getResultNumber())))
      return op;
  linalg::GenericOp slim = cloneWithResults(op, kept, rewriter);
  for (auto [k, i] : llvm::enumerate(kept))
    rewriter.replaceAllUsesWith(op->getResult(i), slim->getResult(k));
  rewriter.eraseOp(op);
  return slim;
}

/// Splits a generic of float results that do not read each other's
/// accumulators (a sum and a sum of squares in one pass, as
/// --linalg-fuse-elementwise-ops makes them) into one generic per result:
/// only single-result generics have an adjoint. (Values with their argmax,
/// torch's max(dim), stay one: the indices read the running values.)
static void splitIndependentResults(linalg::GenericOp op,
                                    RewriterBase &rewriter) {
  unsigned numInputs = op.getNumDpsInputs(), n = op->getNumResults();
  if (llvm::any_of(op->getResultTypes(), [](Type t) {
        return !isa<FloatType>(getElementTypeOrSelf(t));
      }))
    return;
  for (unsigned i = 0; i < n; ++i) {
    llvm::DenseSet<Value> needed = neededBy(op, {i});
    for (unsigned j = 0; j < n; ++j)
      if (j != i && needed.contains(op.getBlock()->getArgument(numInputs + j)))
        return;
  }
  for (unsigned i = 0; i < n; ++i) {
    linalg::GenericOp piece = cloneWithResults(op, {i}, rewriter);
    rewriter.replaceAllUsesWith(op->getResult(i), piece->getResult(0));
  }
  rewriter.eraseOp(op);
}

LogicalResult StepBuilder::prepare() {
  // Element-wise arith and math on tensors become linalg.
  MLIRContext *ctx = fn.getContext();
  ConversionTarget target(*ctx);
  target.markUnknownOpDynamicallyLegal([](Operation *op) {
    return !OpTrait::hasElementwiseMappableTraits(op) ||
           llvm::none_of(op->getOperandTypes(),
                         [](Type t) { return isa<RankedTensorType>(t); });
  });
  RewritePatternSet elementwise(ctx);
  linalg::populateElementwiseToLinalgConversionPatterns(elementwise);
  InheritStrategy inherit;
  ConversionConfig config;
  config.listener = &inherit;
  if (failed(
          applyPartialConversion(fn, target, std::move(elementwise), config)))
    return failure();
  inherit.inserted.clear();

  if (failed(decomposeAggregatedOps(fn, &inherit)))
    return failure();
  IRRewriter rewriter(fn.getContext(), &inherit);
  // One rule for all linalg ops: generalize the named ones.
  SmallVector<linalg::LinalgOp> named;
  fn.walk([&](linalg::LinalgOp op) {
    if (!isa<linalg::GenericOp>(op))
      named.push_back(op);
  });
  for (linalg::LinalgOp op : named) {
    rewriter.setInsertionPoint(op);
    if (failed(linalg::generalizeNamedOp(rewriter, op)))
      return op.emitError("epl-autodiff: cannot generalize this op");
    inherit.inserted.clear();
  }
  SmallVector<linalg::GenericOp> generics;
  fn.walk([&](linalg::GenericOp op) {
    if (op->getNumResults() > 1)
      generics.push_back(op);
  });
  for (linalg::GenericOp op : generics) {
    linalg::GenericOp left = dropDeadResults(op, rewriter);
    if (left->getNumResults() > 1)
      splitIndependentResults(left, rewriter);
  }
  return success();
}

/// The parameters of a model function, in argument order.
static SmallVector<BlockArgument> paramsOf(func::FuncOp fn) {
  SmallVector<BlockArgument> params;
  for (BlockArgument arg : fn.getArguments())
    if (getArgKind(fn, arg.getArgNumber()) == "param")
      params.push_back(arg);
  return params;
}

void StepBuilder::analyzeActivity() {
  for (BlockArgument arg : fn.getArguments()) {
    if (getArgKind(fn, arg.getArgNumber()) == "param")
      varied.insert(arg);
    else
      dataDependent.insert(arg);
  }
  int64_t next = 0;
  for (Operation &op : fn.front().without_terminator()) {
    ids[&op] = next;
    op.setAttr(EPLDialect::kIdAttrName, b.getI64IntegerAttr(next++));
    op.setAttr(EPLDialect::kPhaseAttrName,
               PhaseAttr::get(op.getContext(), Phase::Forward));
    bool anyVaried = false, anyData = false;
    // Values captured by nested bodies count as operands.
    op.walk([&](Operation *nested) {
      for (Value v : nested->getOperands()) {
        anyVaried |= varied.contains(v);
        anyData |= dataDependent.contains(v);
      }
    });
    for (Value r : op.getResults()) {
      if (anyVaried)
        varied.insert(r);
      if (anyData)
        dataDependent.insert(r);
    }
  }
}

Value StepBuilder::zerosLike(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return zeroFill(tensor::EmptyOp::create(b, fn.getLoc(), tensor.getShape(),
                                          tensor.getElementType()));
}

Value StepBuilder::zerosLike(Value like) {
  Location loc = fn.getLoc();
  return zeroFill(tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, like),
      cast<RankedTensorType>(like.getType()).getElementType()));
}

Value StepBuilder::zeroFill(Value empty) {
  Location loc = fn.getLoc();
  Type element = cast<RankedTensorType>(empty.getType()).getElementType();
  Value zero = arith::ConstantOp::create(
      b, loc, cast<TypedAttr>(b.getZeroAttr(element)));
  return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
}

void StepBuilder::accumulate(Value forward, Value contribution) {
  if (!contribution || !varied.contains(forward) || !isFloatTensor(forward))
    return;
  Value &slot = grads[forward];
  if (!slot) {
    slot = contribution;
    return;
  }
  // The gradient of a value is summed where the value is made, whichever
  // user's adjoint comes last: on a pipeline, contributions flow back to
  // the value's stage.
  Attribute userStage = tagger.stage;
  if (Operation *def = forward.getDefiningOp())
    if (Attribute stage = def->getAttr(EPLDialect::kStageAttrName))
      tagger.stage = stage;
  auto type = cast<RankedTensorType>(forward.getType());
  Value init = tensor::EmptyOp::create(b, forward.getLoc(), type.getShape(),
                                       type.getElementType());
  // A generic, not linalg.add: generalizing a named op later drops its
  // stage and origin.
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  slot =
      linalg::GenericOp::create(
          b, forward.getLoc(), TypeRange{type}, ValueRange{slot, contribution},
          ValueRange{init}, SmallVector<AffineMap>(3, id),
          SmallVector<utils::IteratorType>(type.getRank(),
                                           utils::IteratorType::parallel),
          [](OpBuilder &nb, Location nl, ValueRange args) {
            linalg::YieldOp::create(
                nb, nl,
                ValueRange{arith::AddFOp::create(nb, nl, args[0], args[1])
                               .getResult()});
          })
          .getResult(0);
  tagger.stage = userStage;
}

LogicalResult StepBuilder::backward() {
  Block &body = fn.front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Value loss = ret.getOperand(0);
  b.setInsertionPoint(ret);

  tagger.phase = Phase::BackwardInput;
  auto lossType = cast<RankedTensorType>(loss.getType());
  grads[loss] = arith::ConstantOp::create(
      b, fn.getLoc(), lossType,
      DenseElementsAttr::get(lossType,
                             b.getFloatAttr(lossType.getElementType(), 1.0)));

  SmallVector<Operation *> forwardOps;
  for (Operation &op : body.without_terminator())
    forwardOps.push_back(&op);
  for (Operation *op : llvm::reverse(forwardOps)) {
    if (llvm::none_of(op->getResults(),
                      [&](Value r) { return grads.count(r); }))
      continue;
    // Values captured by nested bodies count as operands: a body that
    // reads a parameter from outside (a gather) has a gradient too.
    bool reads =
        op->walk([&](Operation *nested) {
            return llvm::any_of(nested->getOperands(),
                                [&](Value v) { return varied.contains(v); })
                       ? WalkResult::interrupt()
                       : WalkResult::advance();
          }).wasInterrupted();
    if (!reads)
      continue;
    tagger.origin = ids.lookup(op);
    tagger.stage = op->getAttr(EPLDialect::kStageAttrName);
    if (failed(adjointOf(op)))
      return failure();
  }
  tagger.origin.reset();
  tagger.stage = {};
  return success();
}

LogicalResult StepBuilder::adjointOf(Operation *op) {
  Location loc = op->getLoc();
  auto dout = [&](unsigned i = 0) { return grads.lookup(op->getResult(i)); };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](linalg::GenericOp g) { return genericAdjoint(g); })
      .Case([&](tensor::ExpandShapeOp e) {
        tagger.phase = phaseFor(e.getSrc());
        accumulate(e.getSrc(), tensor::CollapseShapeOp::create(
                                   b, loc, e.getSrcType(), dout(),
                                   e.getReassociationIndices()));
        return success();
      })
      .Case([&](tensor::CollapseShapeOp c) {
        tagger.phase = phaseFor(c.getSrc());
        accumulate(c.getSrc(),
                   tensor::ExpandShapeOp::create(b, loc, c.getSrcType(), dout(),
                                                 c.getReassociationIndices()));
        return success();
      })
      .Case([&](tensor::ExtractSliceOp s) {
        tagger.phase = phaseFor(s.getSource());
        Value zeros = zerosLike(s.getSource());
        accumulate(s.getSource(),
                   tensor::InsertSliceOp::create(
                       b, loc, dout(), zeros, s.getMixedOffsets(),
                       s.getMixedSizes(), s.getMixedStrides()));
        return success();
      })
      .Case([&](tensor::InsertSliceOp s) {
        tagger.phase = phaseFor(s.getSource());
        accumulate(s.getSource(),
                   tensor::ExtractSliceOp::create(
                       b, loc, s.getSourceType(), dout(), s.getMixedOffsets(),
                       s.getMixedSizes(), s.getMixedStrides()));
        tagger.phase = phaseFor(s.getDest());
        accumulate(s.getDest(), tensor::InsertSliceOp::create(
                                    b, loc, zerosLike(s.getSource()), dout(),
                                    s.getMixedOffsets(), s.getMixedSizes(),
                                    s.getMixedStrides()));
        return success();
      })
      .Case([&](tensor::ConcatOp c) -> LogicalResult {
        int64_t dim = c.getDim();
        int64_t offset = 0;
        for (Value input : c.getInputs()) {
          auto type = cast<RankedTensorType>(input.getType());
          if (!type.hasStaticShape())
            return c.emitError(
                "epl-autodiff: cannot differentiate a dynamic concat");
          SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
          offsets[dim] = b.getIndexAttr(offset);
          SmallVector<OpFoldResult> sizes,
              strides(type.getRank(), b.getIndexAttr(1));
          for (int64_t s : type.getShape())
            sizes.push_back(b.getIndexAttr(s));
          tagger.phase = phaseFor(input);
          accumulate(input, tensor::ExtractSliceOp::create(
                                b, loc, type, dout(), offsets, sizes, strides));
          offset += type.getDimSize(dim);
        }
        return success();
      })
      .Case([&](tensor::PadOp p) -> LogicalResult {
        // The gradient of the padded part goes nowhere: the padding value
        // is a constant (a parameter-dependent one is not supported).
        Value padding = p.getConstantPaddingValue();
        if (!padding || varied.contains(padding) ||
            !p.getSourceType().hasStaticShape())
          return p.emitError("epl-autodiff: cannot differentiate a tensor.pad "
                             "whose padding value is not a constant or whose "
                             "source shape is dynamic");
        tagger.phase = phaseFor(p.getSource());
        RankedTensorType source = p.getSourceType();
        SmallVector<OpFoldResult> sizes,
            strides(source.getRank(), b.getIndexAttr(1));
        for (int64_t size : source.getShape())
          sizes.push_back(b.getIndexAttr(size));
        accumulate(p.getSource(), tensor::ExtractSliceOp::create(
                                      b, loc, source, dout(),
                                      p.getMixedLowPad(), sizes, strides));
        return success();
      })
      .Case([&](ShardingConstraintOp c) {
        // The identity. The gradient is not pinned: its layout follows from
        // the ops around it, so that e.g. the backward of a sequence-
        // parallel region gathers activations rather than weights.
        tagger.phase = phaseFor(c.getInput());
        accumulate(c.getInput(), dout());
        return success();
      })
      .Case([&](tensor::CastOp c) {
        tagger.phase = phaseFor(c.getSource());
        accumulate(c.getSource(), tensor::CastOp::create(
                                      b, loc, c.getSource().getType(), dout()));
        return success();
      })
      .Default([&](Operation *) {
        return op->emitError()
               << "epl-autodiff: cannot differentiate '" << op->getName()
               << "'; the loss depends on a parameter "
                  "through it";
      });
}

FailureOr<GenericForm> StepBuilder::analyzeGeneric(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1) {
    auto diag = op.emitError() << "epl-autodiff: cannot differentiate a "
                                  "linalg.generic with "
                               << op.getNumDpsInits() << " results";
    // torch's max(dim) and min(dim): the values and their indices in one
    // reduction. argmax alone is not differentiated (its values are
    // dropped), and a gather of the values at it is.
    auto integer = [](Value v) {
      return isa<IntegerType, IndexType>(getElementTypeOrSelf(v.getType()));
    };
    if (llvm::count_if(op->getResults(), integer) == op->getNumResults() - 1) {
      for (OpResult r : op->getResults())
        if (integer(r))
          diag << ": result " << r.getResultNumber() << " (" << r.getType()
               << ") holds indices, as torch's max(dim) and min(dim) return "
                  "beside the values; take the indices alone "
                  "(i = x.argmax(dim)) and the values as a gather at them "
                  "(x.gather(dim, i.unsqueeze(dim))), which are "
                  "differentiated";
    }
    return diag;
  }
  GenericForm g;
  g.op = op;
  g.out = op.getResult(0);
  g.body = &op.getRegion().front();
  g.numInputs = op.getNumDpsInputs();
  g.acc = g.body->getArgument(g.numInputs);
  g.target = cast<linalg::YieldOp>(g.body->getTerminator()).getOperand(0);
  g.maps = op.getIndexingMapsArray();
  g.outMap = g.maps[g.numInputs];
  g.iterators = op.getIteratorTypesArray();
  g.reduces = llvm::is_contained(g.iterators, utils::IteratorType::reduction);
  g.init = op.getDpsInitOperand(0)->get();
  g.initRead = !g.reduces && !g.acc.use_empty();

  // A value the body captures from outside that depends on a parameter
  // gets a gradient only as the tensor a gather (`tensor.extract` directly
  // in the body) reads: anything else would be silently dropped.
  WalkResult captured = g.body->walk([&](Operation *nested) {
    for (Value v : nested->getOperands()) {
      // A shape is not a dependency.
      if (!varied.contains(v) ||
          op.getRegion().isAncestor(v.getParentRegion()) ||
          isa<tensor::DimOp>(nested))
        continue;
      auto gather = dyn_cast<tensor::ExtractOp>(nested);
      if (gather && gather->getBlock() == g.body && v == gather.getTensor() &&
          isFloatTensor(v)) {
        g.gathers.push_back(gather);
        continue;
      }
      InFlightDiagnostic diag =
          op.emitError() << "epl-autodiff: cannot differentiate the body of "
                            "this op: its '"
                         << nested->getName()
                         << "' uses a value that depends on a parameter from "
                            "outside the body; pass it as an input";
      if (v.getDefiningOp())
        diag.attachNote(v.getLoc()) << "the value is defined here";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (captured.wasInterrupted())
    return failure();
  if (!g.reduces)
    return g;

  // With reductions, the body must be `acc (+|-|max|min) h(inputs)`.
  Operation *comb = g.target.getDefiningOp();
  // A max or min written as a compare and a select (PyTorch's argmax
  // body): select(h > acc, h, acc), in any order and sense.
  if (auto select = dyn_cast_or_null<arith::SelectOp>(comb);
      select && select->getBlock() == g.body) {
    auto cmp = select.getCondition().getDefiningOp<arith::CmpFOp>();
    Value t = select.getTrueValue(), f = select.getFalseValue();
    using P = arith::CmpFPredicate;
    if (cmp && cmp->getBlock() == g.body && (t == g.acc) != (f == g.acc)) {
      P p = cmp.getPredicate();
      bool greater = p == P::OGT || p == P::OGE || p == P::UGT || p == P::UGE;
      bool less = p == P::OLT || p == P::OLE || p == P::ULT || p == P::ULE;
      bool same = cmp.getLhs() == t && cmp.getRhs() == f;
      bool swapped = cmp.getLhs() == f && cmp.getRhs() == t;
      if ((greater || less) && (same || swapped)) {
        // select(t > f, t, f) is max(t, f); select(f > t, t, f) min.
        g.combiner = greater == same ? Combiner::Max : Combiner::Min;
        g.target = t == g.acc ? f : t;
        if (!llvm::all_of(g.acc.getUsers(), [&](Operation *user) {
              return user == select || user == cmp;
            }))
          return op.emitError("epl-autodiff: cannot differentiate this "
                              "reduction: the accumulator is used more than "
                              "once");
        return g;
      }
    }
  }
  if (!comb || comb->getNumOperands() != 2 || comb->getBlock() != g.body ||
      !llvm::is_contained(comb->getOperands(), Value(g.acc)))
    return op.emitError("epl-autodiff: cannot differentiate this "
                        "reduction: its body must combine the accumulator "
                        "with one value (sum, max or min)");
  // acc - h sums -h.
  g.subtracts = isa<arith::SubFOp>(comb) && comb->getOperand(0) == g.acc;
  g.combiner = llvm::TypeSwitch<Operation *, Combiner>(comb)
                   .Case<arith::AddFOp>([](auto) { return Combiner::Sum; })
                   .Case<arith::SubFOp>([&](auto) {
                     return g.subtracts ? Combiner::Sum : Combiner::None;
                   })
                   .Case<arith::MaximumFOp, arith::MaxNumFOp>(
                       [](auto) { return Combiner::Max; })
                   .Case<arith::MinimumFOp, arith::MinNumFOp>(
                       [](auto) { return Combiner::Min; })
                   .Default([](auto) { return Combiner::None; });
  if (g.combiner == Combiner::None)
    return op.emitError() << "epl-autodiff: cannot differentiate a "
                             "reduction that combines with '"
                          << comb->getName()
                          << "'; sum, max and min are supported";
  g.target =
      comb->getOperand(0) == g.acc ? comb->getOperand(1) : comb->getOperand(0);
  if (!g.acc.hasOneUse() || g.target == g.acc)
    return op.emitError("epl-autodiff: cannot differentiate this "
                        "reduction: the accumulator is used more than once");
  return g;
}

/// The operands of a backward generic of `g`: dout, every forward input,
/// the forward init (when the body reads it) and the forward result
/// (max/min: who won), with their indexing maps.
struct BackwardInputs {
  SmallVector<Value> values;
  SmallVector<AffineMap> maps;
  int64_t initIndex = -1, outIndex = -1, tiesIndex = -1;
};

static BackwardInputs backwardInputs(const GenericForm &g, Value dout,
                                     Value ties) {
  BackwardInputs in;
  in.values.push_back(dout);
  in.maps.push_back(g.outMap);
  for (unsigned j = 0; j < g.numInputs; ++j) {
    in.values.push_back(g.op->getOperand(j));
    in.maps.push_back(g.maps[j]);
  }
  if (g.initRead) {
    in.initIndex = in.values.size();
    in.values.push_back(g.init);
    in.maps.push_back(g.outMap);
  }
  if (g.combiner == Combiner::Max || g.combiner == Combiner::Min) {
    in.outIndex = in.values.size();
    in.values.push_back(g.out);
    in.maps.push_back(g.outMap);
    in.tiesIndex = in.values.size();
    in.values.push_back(ties);
    in.maps.push_back(g.outMap);
  }
  return in;
}

/// In the body of a backward generic made from `in` (block arguments
/// `args`): recomputes the forward body and returns dout times the
/// derivative of its yielded value with respect to forward body value
/// `wrt` (null when it does not depend on it).
static FailureOr<Value> bodyAdjoint(const GenericForm &g,
                                    const BackwardInputs &in, OpBuilder &nb,
                                    Location nl, ValueRange args, Value wrt,
                                    IRMapping &primal) {
  for (unsigned j = 0; j < g.numInputs; ++j)
    primal.map(g.body->getArgument(j), args[1 + j]);
  Type element = g.acc.getType();
  Value accValue =
      in.initIndex >= 0 ? args[in.initIndex]
      : in.outIndex >= 0
          ? args[in.outIndex]
          : arith::ConstantOp::create(nb, nl, element, nb.getZeroAttr(element))
                .getResult();
  primal.map(g.acc, accValue);
  BodyDifferentiator differentiate(nb, nl, *g.body, primal);
  differentiate.clonePrimal();
  Value seed = args[0];
  if (g.subtracts)
    seed = arith::NegFOp::create(nb, nl, seed);
  FailureOr<Value> adjoint = differentiate.adjoint(g.target, seed, wrt, g.op);
  if (failed(adjoint) || !*adjoint || in.outIndex < 0)
    return adjoint;
  // Only the elements that won the max (min) get the gradient, split
  // evenly among ties (as torch.amax): a count is a sum, which shards (a
  // first winner would need global positions, and a split max gathered).
  Value contribution = *adjoint;
  Value count = args[in.tiesIndex];
  Value zero = arith::ConstantOp::create(
      nb, nl, contribution.getType(), nb.getZeroAttr(contribution.getType()));
  Value won = arith::AndIOp::create(
      nb, nl,
      arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                            primal.lookup(g.target), args[in.outIndex]),
      // Spread copies (windows) hold no count where no window lands.
      arith::CmpFOp::create(
          nb, nl, arith::CmpFPredicate::OGT, count,
          arith::ConstantOp::create(nb, nl, count.getType(),
                                    nb.getZeroAttr(count.getType()))));
  if (count.getType() != contribution.getType())
    count = arith::ExtFOp::create(nb, nl, contribution.getType(), count);
  Value share = arith::DivFOp::create(nb, nl, contribution, count);
  return arith::SelectOp::create(nb, nl, won, share, zero).getResult();
}

/// A result `s * a + d * b` of an input's indexing map: a convolution's or
/// pooling's `oh * stride + kh * dilation`. Loop `a` is an output
/// dimension (at `outDim` of the output), loop `b` one the output reduces.
struct Window {
  unsigned result, a, b, outDim;
  int64_t s, d;
};

/// `c * dim` (c >= 1) as (dim, c).
static std::optional<std::pair<unsigned, int64_t>> scaledDim(AffineExpr e) {
  if (auto d = dyn_cast<AffineDimExpr>(e))
    return std::make_pair(d.getPosition(), int64_t(1));
  if (e.getKind() != AffineExprKind::Mul)
    return std::nullopt;
  auto mul = cast<AffineBinaryOpExpr>(e);
  auto d = dyn_cast<AffineDimExpr>(mul.getLHS());
  auto c = dyn_cast<AffineConstantExpr>(mul.getRHS());
  if (!d || !c) {
    d = dyn_cast<AffineDimExpr>(mul.getRHS());
    c = dyn_cast<AffineConstantExpr>(mul.getLHS());
  }
  if (!d || !c || c.getValue() < 1)
    return std::nullopt;
  return std::make_pair(d.getPosition(), c.getValue());
}

/// The windows of `wrtMap` (the map of `wrt` in `g`), when every result
/// that is not a plain dimension is one and the gradient can be written as
/// a generic whose output `wrtMap` indexes by plain dimensions: `a` is read
/// by no other input, `b` by another input as a plain dimension (its
/// range), and the body reads neither's index.
static FailureOr<SmallVector<Window>> windowsOf(const GenericForm &g,
                                                BlockArgument wrt,
                                                AffineMap wrtMap,
                                                RankedTensorType type) {
  SmallVector<Window> windows;
  llvm::SmallDenseSet<unsigned> used;
  for (auto [r, e] : llvm::enumerate(wrtMap.getResults())) {
    if (isa<AffineDimExpr>(e))
      continue;
    if (auto c = dyn_cast<AffineConstantExpr>(e);
        c && c.getValue() == 0 && type.getDimSize(r) == 1)
      continue;
    if (e.getKind() != AffineExprKind::Add)
      return failure();
    auto add = cast<AffineBinaryOpExpr>(e);
    auto lhs = scaledDim(add.getLHS()), rhs = scaledDim(add.getRHS());
    if (!lhs || !rhs || lhs->first == rhs->first)
      return failure();
    std::optional<unsigned> lhsOut =
                                g.outMap.getResultPosition(getAffineDimExpr(
                                    lhs->first, g.op.getContext())),
                            rhsOut =
                                g.outMap.getResultPosition(getAffineDimExpr(
                                    rhs->first, g.op.getContext()));
    if (lhsOut.has_value() == rhsOut.has_value())
      return failure();
    auto [a, s] = lhsOut ? *lhs : *rhs;
    auto [b, d] = lhsOut ? *rhs : *lhs;
    unsigned outDim = lhsOut ? *lhsOut : *rhsOut;
    if (g.outMap.isFunctionOfDim(b) || !used.insert(a).second ||
        !used.insert(b).second)
      return failure();
    windows.push_back({static_cast<unsigned>(r), a, b, outDim, s, d});
  }
  for (const Window &w : windows) {
    // Loop `a` appears only in this result of `wrtMap` and in the output.
    for (auto [r, e] : llvm::enumerate(wrtMap.getResults()))
      if (r != w.result && e.isFunctionOfDim(w.a))
        return failure();
    bool ranged = false;
    for (unsigned j = 0; j < g.numInputs; ++j) {
      if (j == wrt.getArgNumber())
        continue;
      if (g.maps[j].isFunctionOfDim(w.a))
        return failure();
      ranged |= g.maps[j]
                    .getResultPosition(getAffineDimExpr(w.b, g.op.getContext()))
                    .has_value();
    }
    if (!ranged)
      return failure();
    for (auto index : g.body->getOps<linalg::IndexOp>())
      if (index.getDim() == w.a || index.getDim() == w.b)
        return failure();
  }
  if (windows.empty() || wrt == g.acc)
    return failure();
  return windows;
}

/// Rewrites the inputs of the backward generic of `wrt` for `windows` and
/// returns the map of its output. The gradient is a transposed window: the
/// loop of each window's `a` now runs over `wrt`'s dimension `i`, and the
/// output-shaped inputs (dout; the result of a max) are read at
/// `(i - d * b + d * (B - 1))` of a copy spread by the stride `s` and
/// padded by `d * (B - 1)` (zeros where no window position lands), so
/// that every (i, b) meets the output position `a` with `s * a + d * b = i`,
/// or zero.
AffineMap StepBuilder::throughWindows(const GenericForm &g, BackwardInputs &in,
                                      BlockArgument wrt, AffineMap wrtMap,
                                      ArrayRef<Window> windows,
                                      RankedTensorType type) {
  MLIRContext *ctx = g.op.getContext();
  Location loc = g.op.getLoc();
  SmallVector<int64_t> loops = g.op.getStaticLoopRanges();
  llvm::DenseMap<AffineExpr, AffineExpr> shift;
  for (const Window &w : windows) {
    AffineExpr a = getAffineDimExpr(w.a, ctx), b = getAffineDimExpr(w.b, ctx);
    int64_t pad = w.d * (loops[w.b] - 1);
    shift[a] = a - b * w.d + pad;
  }
  auto spread = [&](Value t) {
    auto tType = cast<RankedTensorType>(t.getType());
    SmallVector<int64_t> shape(tType.getShape());
    SmallVector<OpFoldResult> offsets(shape.size(), b.getIndexAttr(0)), sizes,
        strides(shape.size(), b.getIndexAttr(1));
    for (int64_t size : shape)
      sizes.push_back(b.getIndexAttr(size));
    for (const Window &w : windows) {
      int64_t pad = w.d * (loops[w.b] - 1);
      shape[w.outDim] = type.getDimSize(w.result) + pad;
      offsets[w.outDim] = b.getIndexAttr(pad);
      strides[w.outDim] = b.getIndexAttr(w.s);
    }
    Value zeros =
        zerosLike(RankedTensorType::get(shape, tType.getElementType()));
    return tensor::InsertSliceOp::create(b, loc, t, zeros, offsets, sizes,
                                         strides)
        .getResult();
  };
  // dout, and the forward result when a max or min reads it.
  in.values[0] = spread(in.values[0]);
  in.maps[0] = in.maps[0].replace(shift, in.maps[0].getNumDims(), 0);
  for (int64_t i : {in.outIndex, in.tiesIndex})
    if (i >= 0) {
      in.values[i] = spread(in.values[i]);
      in.maps[i] = in.maps[i].replace(shift, in.maps[i].getNumDims(), 0);
    }
  // `wrt` itself, and the gradient, at position `i` (loop `a`).
  SmallVector<AffineExpr> results(wrtMap.getResults());
  for (const Window &w : windows)
    results[w.result] = getAffineDimExpr(w.a, ctx);
  AffineMap plain = AffineMap::get(wrtMap.getNumDims(), 0, results, ctx);
  in.maps[1 + wrt.getArgNumber()] = plain;
  return plain;
}

/// The gradient of forward block argument `wrt` of `g`, flowing to
/// `forward` through indexing map `wrtMap`: a generic over the same loops
/// (loops `wrtMap` drops become reductions) whose body is the scalar
/// derivative of the forward body.
LogicalResult StepBuilder::gradientThrough(const GenericForm &g, Value dout,
                                           BlockArgument wrt, Value forward,
                                           AffineMap wrtMap) {
  linalg::GenericOp op = g.op;
  auto type = cast<RankedTensorType>(forward.getType());
  // A keep-dim map (`(d0, d1) -> (d0, 0)` on a unit dimension, as
  // torch-mlir writes reductions) is a projection too.
  bool unitZeros =
      llvm::all_of(llvm::enumerate(wrtMap.getResults()), [&](auto e) {
        auto c = dyn_cast<AffineConstantExpr>(e.value());
        return !c || (c.getValue() == 0 && type.getDimSize(e.index()) == 1);
      });
  SmallVector<Window> windows;
  if (!wrtMap.isProjectedPermutation(/*allowZeroInResults=*/true) ||
      !unitZeros) {
    FailureOr<SmallVector<Window>> found = windowsOf(g, wrt, wrtMap, type);
    if (failed(found)) {
      std::string map;
      llvm::raw_string_ostream(map) << wrtMap;
      return op.emitError()
             << "epl-autodiff: cannot differentiate through the indexing map "
             << map
             << "; only projections and windows (`s * oh + d * kh`, as "
                "convolutions and pooling read their input) are supported";
    }
    windows = std::move(*found);
  }
  tagger.phase = phaseFor(forward);
  Value gradInit = grads.lookup(forward);
  // A contribution made on another pipeline stage than the gradient so far
  // is added where the value is made (accumulate), not into its buffer:
  // the stages' backward would otherwise read each other out of order.
  Value earlier;
  if (Operation *def = gradInit ? gradInit.getDefiningOp() : nullptr;
      def && def->getAttr(EPLDialect::kStageAttrName) != tagger.stage) {
    earlier = gradInit;
    gradInit = Value();
  }

  BackwardInputs in = backwardInputs(g, dout, tiesOf(g));
  if (!windows.empty())
    wrtMap = throughWindows(g, in, wrt, wrtMap, windows, type);
  in.maps.push_back(wrtMap);
  SmallVector<utils::IteratorType> bwdIterators;
  for (unsigned d = 0; d < g.iterators.size(); ++d)
    bwdIterators.push_back(wrtMap.isFunctionOfDim(d)
                               ? utils::IteratorType::parallel
                               : utils::IteratorType::reduction);
  // The first contribution, read through a permutation (every loop
  // parallel, no window), meets each element once: it is the gradient, not
  // something added to zeros. That is also what PyTorch computes (0 + -0
  // would be +0), and leaves no fill and no add: an element-wise op's
  // gradient passes its operands' through as they are, instead of as a
  // copy added to zeros per operand.
  bool overwrite = !gradInit && windows.empty() &&
                   llvm::all_of(bwdIterators, [](utils::IteratorType t) {
                     return t == utils::IteratorType::parallel;
                   });
  bool madeInit = !gradInit;
  if (overwrite)
    gradInit = tensor::EmptyOp::create(b, fn.getLoc(), type.getShape(),
                                       type.getElementType());
  else if (!gradInit)
    gradInit = zerosLike(type);

  bool failedBody = false, independent = false;
  auto bwd = linalg::GenericOp::create(
      b, op.getLoc(), TypeRange{type}, in.values, ValueRange{gradInit}, in.maps,
      bwdIterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        IRMapping primal;
        FailureOr<Value> contribution =
            bodyAdjoint(g, in, nb, nl, args, wrt, primal);
        Value gradAcc = args.back();
        if (failed(contribution) || !*contribution) {
          failedBody = failed(contribution);
          independent = !failedBody;
          linalg::YieldOp::create(nb, nl, gradAcc);
          return;
        }
        if (overwrite) {
          linalg::YieldOp::create(nb, nl, *contribution);
          return;
        }
        linalg::YieldOp::create(
            nb, nl,
            ValueRange{arith::AddFOp::create(nb, nl, gradAcc, *contribution)
                           .getResult()});
      });
  if (failedBody)
    return failure();
  // The backward op goes, and the init made for it alone (an empty tensor,
  // or one filled with zeros) with it.
  auto eraseBackward = [&] {
    bwd.erase();
    if (!madeInit)
      return;
    SmallVector<Value> made = {gradInit};
    while (!made.empty()) {
      Value v = made.pop_back_val();
      Operation *def = v.getDefiningOp();
      if (!def || !v.use_empty())
        continue;
      if (auto fill = dyn_cast<linalg::FillOp>(def))
        made.append({fill.getInputs()[0], fill.getOutputs()[0]});
      def->erase();
    }
  };
  if (independent) {
    eraseBackward();
    return success();
  }
  Value gradient = bwd.getResult(0);
  // A gradient passed through as it is (an add's to each operand) is the
  // input itself, not a copy: sharding propagation then sees one value,
  // and a partial sum flowing into several ops is reduced once.
  if (overwrite) {
    auto yielded =
        dyn_cast<BlockArgument>(bwd.getBody()->getTerminator()->getOperand(0));
    // (Only within one phase and stage: a pipeline schedule runs the
    // input and weight gradients, and the stages, apart.)
    Operation *def = yielded && yielded.getArgNumber() < in.values.size()
                         ? in.values[yielded.getArgNumber()].getDefiningOp()
                         : nullptr;
    if (def && yielded.getOwner() == bwd.getBody() &&
        in.maps[yielded.getArgNumber()] == wrtMap &&
        in.values[yielded.getArgNumber()].getType() == type &&
        def->getAttr(EPLDialect::kPhaseAttrName) ==
            bwd->getAttr(EPLDialect::kPhaseAttrName) &&
        def->getAttr(EPLDialect::kStageAttrName) ==
            bwd->getAttr(EPLDialect::kStageAttrName)) {
      gradient = in.values[yielded.getArgNumber()];
      eraseBackward();
    }
  }
  if (earlier) {
    grads[forward] = earlier;
    accumulate(forward, gradient);
    return success();
  }
  grads[forward] = gradient;
  return success();
}

/// For a max (min) reduction: per output element, how many elements equal
/// the result (ties share its gradient); null for other generics. A sum
/// over the forward's loops: it shards like the forward.
Value StepBuilder::tiesOf(const GenericForm &g) {
  if (g.combiner != Combiner::Max && g.combiner != Combiner::Min)
    return Value();
  if (g.ties)
    return g.ties;
  auto outType = cast<RankedTensorType>(g.out.getType());
  Type element = outType.getElementType();
  Value init = zerosLike(outType);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (unsigned j = 0; j < g.numInputs; ++j) {
    inputs.push_back(g.op->getOperand(j));
    maps.push_back(g.maps[j]);
  }
  inputs.push_back(g.out);
  maps.push_back(g.outMap);
  maps.push_back(g.outMap);
  g.ties = linalg::GenericOp::create(
               b, g.op.getLoc(), TypeRange{outType}, inputs, ValueRange{init},
               maps, g.iterators,
               [&](OpBuilder &nb, Location nl, ValueRange args) {
                 IRMapping primal;
                 for (unsigned j = 0; j < g.numInputs; ++j)
                   primal.map(g.body->getArgument(j), args[j]);
                 primal.map(g.acc, args[g.numInputs]);
                 BodyDifferentiator(nb, nl, *g.body, primal).clonePrimal();
                 Value equal = arith::CmpFOp::create(
                     nb, nl, arith::CmpFPredicate::OEQ, primal.lookup(g.target),
                     args[g.numInputs]);
                 Value one = arith::SelectOp::create(
                     nb, nl, equal,
                     arith::ConstantOp::create(nb, nl, element,
                                               nb.getFloatAttr(element, 1.0)),
                     arith::ConstantOp::create(nb, nl, element,
                                               nb.getZeroAttr(element)));
                 linalg::YieldOp::create(
                     nb, nl,
                     ValueRange{arith::AddFOp::create(nb, nl, args.back(), one)
                                    .getResult()});
               })
               .getResult(0);
  return g.ties;
}

/// The gradient of the tensor a gather in the body of `g` reads: the
/// contribution and the indices of every forward loop iteration (a generic
/// over the same loops, all parallel), then an `epl.scatter_add` of the
/// contributions at those indices.
LogicalResult StepBuilder::gatherAdjoint(const GenericForm &g, Value dout,
                                         tensor::ExtractOp gather) {
  linalg::GenericOp op = g.op;
  Value source = gather.getTensor();
  SmallVector<int64_t> loops = op.getStaticLoopRanges();
  if (ShapedType::isDynamicShape(loops))
    return op.emitError("epl-autodiff: cannot differentiate a gather in the "
                        "body of an op with dynamic loop bounds");
  tagger.phase = phaseFor(source);
  Location loc = op.getLoc();
  auto sourceType = cast<RankedTensorType>(source.getType());
  BackwardInputs in = backwardInputs(g, dout, tiesOf(g));
  AffineMap identity = b.getMultiDimIdentityMap(loops.size());
  // A dimension read at a loop's own position (the example's row of the
  // scores a label picks from) is a batching dimension of the scatter: no
  // index tensor, and the gradient keeps the rows where they are, so it
  // shards and splits into micro-batches with the loop.
  SmallVector<int64_t> destBatching, updatesBatching;
  SmallVector<Value> indices;
  SmallVector<std::optional<unsigned>> positions = readPositions(op, gather);
  for (auto [d, index] : llvm::enumerate(gather.getIndices())) {
    if (positions[d]) {
      destBatching.push_back(d);
      updatesBatching.push_back(*positions[d]);
    } else {
      indices.push_back(index);
    }
  }
  SmallVector<Type> resultTypes = {
      RankedTensorType::get(loops, sourceType.getElementType())};
  resultTypes.append(indices.size(),
                     RankedTensorType::get(loops, b.getI64Type()));
  SmallVector<Value> inits;
  for (Type t : resultTypes) {
    auto type = cast<RankedTensorType>(t);
    inits.push_back(tensor::EmptyOp::create(b, loc, type.getShape(),
                                            type.getElementType()));
    in.maps.push_back(identity);
  }

  bool failedBody = false, independent = false;
  auto contributions = linalg::GenericOp::create(
      b, loc, resultTypes, in.values, inits, in.maps,
      SmallVector<utils::IteratorType>(loops.size(),
                                       utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        IRMapping primal;
        FailureOr<Value> contribution =
            bodyAdjoint(g, in, nb, nl, args, gather.getResult(), primal);
        failedBody = failed(contribution);
        independent = succeeded(contribution) && !*contribution;
        SmallVector<Value> yields;
        if (failedBody || independent)
          yields.assign(args.take_back(inits.size()).begin(),
                        args.take_back(inits.size()).end());
        else {
          yields.push_back(*contribution);
          for (Value index : indices)
            yields.push_back(arith::IndexCastOp::create(
                nb, nl, nb.getI64Type(), primal.lookupOrDefault(index)));
        }
        linalg::YieldOp::create(nb, nl, yields);
      });
  if (failedBody)
    return failure();
  if (independent) {
    contributions.erase();
    return success();
  }
  auto scatter = ScatterAddOp::create(
      b, loc, zerosLike(source), contributions.getResult(0),
      contributions.getResults().drop_front(), destBatching, updatesBatching);
  accumulate(source, scatter.getResult());
  return success();
}

LogicalResult StepBuilder::genericAdjoint(linalg::GenericOp op) {
  // Adjoints are built over the op's loops, with static bounds.
  if (ShapedType::isDynamicShape(op.getStaticLoopRanges()))
    return op.emitError("epl-autodiff: cannot differentiate an op whose "
                        "loops run over a dimension of dynamic size; cast "
                        "its operands to static shapes");
  FailureOr<GenericForm> form = analyzeGeneric(op);
  if (failed(form))
    return failure();
  const GenericForm &g = *form;
  Value dout = grads.lookup(g.out);
  for (unsigned i = 0; i < g.numInputs; ++i) {
    Value x = op.getDpsInputOperand(i)->get();
    // A scalar input (linalg.fill's value) has no tensor to take a
    // gradient: never drop it silently.
    if (varied.contains(x) && isa<FloatType>(x.getType()))
      return op.emitError()
             << "epl-autodiff: cannot differentiate this op with respect to "
                "its scalar input #"
             << i
             << ", which depends on a parameter; make it a rank-0 tensor "
                "input";
    if (!varied.contains(x) || !isFloatTensor(x))
      continue;
    if (failed(gradientThrough(g, dout, g.body->getArgument(i), x, g.maps[i])))
      return failure();
  }
  for (tensor::ExtractOp gather : g.gathers)
    if (failed(gatherAdjoint(g, dout, gather)))
      return failure();

  Value init = g.init;
  if (!varied.contains(init) || !isFloatTensor(init))
    return success();
  if (g.initRead)
    return gradientThrough(g, dout, g.acc, init, g.outMap);
  if (!g.reduces)
    return success();
  tagger.phase = phaseFor(init);
  if (g.combiner == Combiner::Sum) {
    accumulate(init, dout);
    return success();
  }
  // max/min: the initial value keeps the gradient where it won.
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(init.getType());
  AffineMap identity = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> parallel(type.getRank(),
                                            utils::IteratorType::parallel);
  Value empty =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  auto kept = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{dout, init, g.out}, ValueRange{empty},
      SmallVector<AffineMap>(4, identity), parallel,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value won = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                          args[1], args[2]);
        Value zero = arith::ConstantOp::create(
            nb, nl, args[0].getType(), nb.getZeroAttr(args[0].getType()));
        linalg::YieldOp::create(
            nb, nl,
            ValueRange{arith::SelectOp::create(nb, nl, won, args[0], zero)
                           .getResult()});
      });
  accumulate(init, kept.getResult(0));
  return success();
}

LogicalResult StepBuilder::finish() {
  Block &body = fn.front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Value loss = ret.getOperand(0);
  MLIRContext *ctx = fn.getContext();
  b.setInsertionPoint(ret);

  SmallVector<BlockArgument> params = paramsOf(fn);

  SmallVector<Value> results = {loss};
  SmallVector<DictionaryAttr> resultAttrs = {
      getKindAndName(ctx, EPLDialect::kResultAttrName, "loss", "")};

  // Each parameter's gradient, named after it: `epl-apply-optimizer`
  // turns these results into the update.
  tagger.phase = Phase::BackwardWeight;
  for (BlockArgument p : params) {
    results.push_back(gradientOrZeros(p));
    resultAttrs.push_back(getKindAndName(ctx, EPLDialect::kResultAttrName,
                                         "grad",
                                         getArgName(fn, p.getArgNumber())));
  }

  // Model state's next values pass through: nothing differentiates them.
  for (unsigned i = 1; i < ret.getNumOperands(); ++i) {
    results.push_back(ret.getOperand(i));
    resultAttrs.push_back(fn.getResultAttrDict(i));
  }

  setStepResults(fn, results, resultAttrs);
  return success();
}

LogicalResult StepBuilder::run(int64_t &numForward, int64_t &numBackward) {
  if (failed(checkSignature()) || failed(prepare()))
    return failure();
  analyzeActivity();
  numForward += ids.size();
  if (failed(backward()) || failed(finish()))
    return failure();
  numBackward += tagger.count;

  // Backward bodies recompute the whole forward body; keep only what the
  // derivative reads, and drop inputs that end up unused.
  RewritePatternSet patterns(fn.getContext());
  linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
  if (failed(applyPatternsGreedily(fn, std::move(patterns))))
    // The driver says nothing when it gives up.
    return fn.emitError() << "epl-autodiff: erasing what the backward does not "
                             "read did not converge";
  tagHoistedOps();
  return success();
}

void StepBuilder::tagHoistedOps() {
  // The cleanup hoists constants out of bodies; they belong to the phase of
  // the ops that use them.
  for (Operation &op : llvm::reverse(fn.front().without_terminator())) {
    if (op.hasAttr(EPLDialect::kPhaseAttrName))
      continue;
    Attribute phase = PhaseAttr::get(op.getContext(), Phase::Forward);
    for (Operation *user : op.getUsers()) {
      Operation *top = fn.front().findAncestorOpInBlock(*user);
      if (Attribute p =
              top ? top->getAttr(EPLDialect::kPhaseAttrName) : Attribute()) {
        phase = p;
        break;
      }
    }
    op.setAttr(EPLDialect::kPhaseAttrName, phase);
  }
}

LogicalResult StepBuilder::runAccumulating(func::FuncOp micro, int64_t parts,
                                           bool sumGradients,
                                           ArrayRef<Value> statistics) {
  Block &body = fn.front();
  Location loc = fn.getLoc();
  // The forward program now lives in `micro`, but for what computes the
  // statistics of the whole batch.
  llvm::SetVector<Operation *> kept = opsComputing(statistics);
  body.getTerminator()->erase();
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    if (!kept.contains(&op))
      op.erase();
    else
      op.setAttr(EPLDialect::kPhaseAttrName,
                 PhaseAttr::get(op.getContext(), Phase::Forward));

  b.setInsertionPointToEnd(&body);
  tagger.phase = Phase::BackwardWeight;
  SmallVector<BlockArgument> params = paramsOf(fn);
  Type lossType = micro.getResultTypes()[0];
  SmallVector<Value> inits = {zerosLike(lossType)};
  for (BlockArgument p : params)
    inits.push_back(zerosLike(p.getType()));

  Value lb = arith::ConstantIndexOp::create(b, loc, 0);
  Value ub = arith::ConstantIndexOp::create(b, loc, parts);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(
      b, loc, lb, ub, one, inits,
      [&](OpBuilder &lb2, Location l, Value iv, ValueRange acc) {
        // Micro-batch `iv` of every non-parameter argument, along dim 0.
        SmallVector<Value> args;
        for (auto [arg, microType] :
             llvm::zip(fn.getArguments(), micro.getArgumentTypes())) {
          if (arg.getType() == microType) {
            args.push_back(arg);
            continue;
          }
          auto type = cast<RankedTensorType>(microType);
          Value rows =
              arith::ConstantIndexOp::create(lb2, l, type.getDimSize(0));
          Value offset = arith::MulIOp::create(lb2, l, iv, rows);
          SmallVector<OpFoldResult> offsets(type.getRank(),
                                            lb2.getIndexAttr(0));
          offsets[0] = offset;
          SmallVector<OpFoldResult> sizes,
              strides(type.getRank(), lb2.getIndexAttr(1));
          for (int64_t d : type.getShape())
            sizes.push_back(lb2.getIndexAttr(d));
          auto slice = tensor::ExtractSliceOp::create(lb2, l, type, arg,
                                                      offsets, sizes, strides);
          // Under data parallelism each device slices its own shard.
          slice->setAttr(EPLDialect::kMicroBatchAttrName, lb2.getUnitAttr());
          args.push_back(slice);
        }
        llvm::append_range(args, statistics);
        auto call = func::CallOp::create(lb2, l, micro, args);
        // Each micro-batch's loss and gradients are its contribution to the
        // full batch's (constants such as a mean's divisor stay).
        SmallVector<Value> next;
        for (auto [sum, part] : llvm::zip(acc, call.getResults()))
          // Accumulated in place, so the loop carries one buffer each.
          next.push_back(linalg::AddOp::create(lb2, l, TypeRange{sum.getType()},
                                               ValueRange{sum, part},
                                               ValueRange{sum})
                             .getResult(0));
        scf::YieldOp::create(lb2, l, next);
      });

  // The accumulated gradients are the step's (parallelization reduces them
  // after the loop).
  for (auto [p, g] : llvm::zip(params, llvm::drop_begin(loop.getResults()))) {
    Value grad = g;
    if (sumGradients) {
      // EPL's "sum": the sum of the micro-batches' own (mean) gradients,
      // parts times the full batch's.
      auto type = cast<RankedTensorType>(grad.getType());
      Value factor = arith::ConstantOp::create(
          b, loc,
          b.getFloatAttr(type.getElementType(), static_cast<double>(parts)));
      Value init = tensor::EmptyOp::create(b, loc, type.getShape(),
                                           type.getElementType());
      AffineMap id = b.getMultiDimIdentityMap(type.getRank());
      grad = linalg::GenericOp::create(
                 b, loc, TypeRange{type}, ValueRange{grad}, ValueRange{init},
                 SmallVector<AffineMap>{id, id},
                 SmallVector<utils::IteratorType>(
                     type.getRank(), utils::IteratorType::parallel),
                 [&](OpBuilder &nb, Location nl, ValueRange args) {
                   linalg::YieldOp::create(
                       nb, nl,
                       ValueRange{arith::MulFOp::create(nb, nl, args[0], factor)
                                      .getResult()});
                 })
                 .getResult(0);
    }
    grads[p] = grad;
  }
  func::ReturnOp::create(b, loc, loop.getResult(0));
  return finish();
}

struct EPLAutodiffPass
    : public mlir::epl::impl::EPLAutodiffPassBase<EPLAutodiffPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    Config config = Config::get(module);
    auto emitError = [&] { return module.emitError("epl-autodiff: "); };
    if (failed(Config::checkImplemented(module, emitError)))
      return signalPassFailure();
    int64_t microBatches = config.getInt("pipeline.num_micro_batch");
    bool sumGradients =
        config.getString("communication.gradients_reduce_method") == "sum";
    SmallVector<func::FuncOp> models;
    for (auto fn : module.getOps<func::FuncOp>())
      if (!fn.isExternal() && hasTaggedArguments(fn))
        models.push_back(fn);
    if (models.empty()) {
      module.emitError("epl-autodiff: no model function (arguments tagged "
                       "with epl.arg) in the module");
      return signalPassFailure();
    }
    int64_t forward = 0, backwardOps = 0;
    for (func::FuncOp fn : models) {
      // A pipeline runs the step as micro-batches even when there is one:
      // epl-pipeline-partition schedules the micro-batch program.
      bool pipelined = fn.walk([](Operation *op) {
                           return op->hasAttr(EPLDialect::kStageAttrName)
                                      ? WalkResult::interrupt()
                                      : WalkResult::advance();
                         }).wasInterrupted();
      if (microBatches <= 1 && !pipelined) {
        StepBuilder step(fn);
        if (failed(step.run(forward, backwardOps)))
          return signalPassFailure();
        continue;
      }
      // Gradient accumulation: the gradient function of one micro-batch,
      // called once per micro-batch by the step.
      StepBuilder step(fn);
      if (failed(step.checkSignature()) || failed(step.prepare()))
        return signalPassFailure();
      if (fn.getNumResults() > 1) {
        fn.emitError() << "epl-autodiff: @" << fn.getSymName()
                       << " updates model state ('"
                       << fn.getResultAttrOfType<StringAttr>(
                                1, EPLDialect::kNameAttrName)
                              .getValue()
                       << "'), which micro-batches and pipeline stages do not "
                          "carry; train it with one micro-batch and stage";
        return signalPassFailure();
      }
      OpBuilder b(fn);
      IRMapping mapping;
      auto micro = cast<func::FuncOp>(b.clone(*fn, mapping));
      micro.setSymName((fn.getSymName() + "_micro_batch").str());
      micro.setPrivate();
      // The step computes its data's statistics on the whole batch and
      // hands them to every micro-batch.
      SmallVector<Value> statistics = wholeBatchStatistics(fn);
      takeAsArguments(micro, llvm::map_to_vector(statistics, [&](Value v) {
                        return mapping.lookup(v);
                      }));
      if (failed(splitBatch(
              micro, microBatches,
              micro.getArguments().drop_front(fn.getNumArguments()))))
        return signalPassFailure();
      StepBuilder gradient(micro);
      if (failed(gradient.run(forward, backwardOps)))
        return signalPassFailure();
      // Only the step is an entry point.
      for (unsigned i = 0; i < micro.getNumArguments(); ++i)
        micro.setArgAttrs(i, DictionaryAttr::get(&getContext()));
      for (unsigned i = 0; i < micro.getNumResults(); ++i)
        micro.setResultAttrs(i, DictionaryAttr::get(&getContext()));
      if (failed(step.runAccumulating(micro, microBatches, sumGradients,
                                      statistics)))
        return signalPassFailure();
    }
    numForward += forward;
    numBackward += backwardOps;
  }
};
} // namespace
