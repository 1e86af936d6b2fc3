//===- BatchSplitting.cpp - A model on a fraction of its batch ------------===//
//
// Part of EPL-MLIR.
//
// Which dimensions are "the batch" follows from the same information as
// sharding propagation: a loop that indexes the batch dimension of one
// operand of a linalg.generic indexes it in every operand that uses it.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/Transforms/BatchSplitting.h"
#include "epl/Dialect/EPL/IR/EPLDialect.h"
#include "epl/Dialect/EPL/Transforms/ShardingUtils.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;
using namespace mlir::epl;

namespace {
/// Where a value holds the batch: along dimension `dim`, whose index is
/// `(outer * size + b) * inner + i` at example `b` of `size`. A reshape
/// may merge the batch with the dimensions around it: a seq-first layout's
/// (L, B, E) -> (L * B, E) puts it below the sequence (inner 1), heads
/// split off the features (B, L, H * d) -> (B * H, L, d) above them (inner
/// H). Cutting the batch into micro-batches divides `size`; the rest of
/// the dimension stays, so each op computes the same function of fewer
/// examples wherever in a dimension they are.
///
/// Where nothing is above the batch (`major`: outer 1), a micro-batch is a
/// contiguous part of the dimension, whatever `size` and `inner` say: the
/// tokens of (B, L, E) reshaped to (B * L, E) and a label of B * L rows
/// are cut alike, so all such places of a dimension are one.
struct Place {
  int64_t dim, inner, size;
  bool major;
  bool operator==(const Place &other) const {
    if (major && other.major)
      return dim == other.dim;
    return dim == other.dim && inner == other.inner && size == other.size &&
           major == other.major;
  }
};

/// The batch as an op's sharding rule holds it: within the index of one
/// factor, at stride `inner`; `major` where nothing of the factor is above
/// it, which makes carriers of one factor one, as places (see `Place`).
struct Carrier {
  unsigned factor;
  int64_t inner, size;
  bool major;
  bool operator==(const Carrier &other) const {
    if (major && other.major)
      return factor == other.factor;
    return factor == other.factor && inner == other.inner &&
           size == other.size && major == other.major;
  }
};

class BatchAnalysis {
public:
  /// `whole`: arguments that hold no batch (statistics of the whole
  /// batch, see `wholeBatchStatistics`), inputs though they are.
  explicit BatchAnalysis(func::FuncOp fn, ArrayRef<BlockArgument> whole = {})
      : fn(fn), whole(whole) {}

  LogicalResult run() {
    for (BlockArgument arg : fn.getArguments()) {
      StringRef kind = getArgKind(fn, arg.getArgNumber());
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if ((kind == "input" || kind == "label") && type && type.getRank() > 0 &&
          !llvm::is_contained(whole, arg)) {
        if (type.isDynamicDim(0))
          return emitError(arg.getLoc())
                 << "cannot split the batch of " << describe(arg)
                 << ": its dimension 0 has no static size";
        places[arg] = Place{0, 1, type.getDimSize(0), /*major=*/true};
      }
    }
    // Propagate forwards and backwards until nothing changes.
    for (bool changed = true; changed;) {
      changed = false;
      for (Operation &op : fn.front()) {
        FailureOr<bool> step = visit(&op);
        if (failed(step))
          return failure();
        changed |= *step;
      }
    }
    // Reads inside regions, once, against where the batch finally is.
    for (Operation &op : fn.front())
      if (failed(checkBodyReads(&op)))
        return failure();
    return success();
  }

  /// Where `v` holds the batch, if it does.
  std::optional<Place> placeOf(Value v) const {
    auto it = places.find(v);
    if (it == places.end())
      return std::nullopt;
    return it->second;
  }

  /// The batch dimension of `v`, if it has one.
  std::optional<int64_t> dimOf(Value v) const {
    if (std::optional<Place> p = placeOf(v))
      return p->dim;
    return std::nullopt;
  }

  /// The factors of `op`'s sharding rule that run over the batch (for a
  /// linalg.generic, its loops).
  llvm::SmallDenseSet<unsigned> batchFactors(Operation *op,
                                             const ShardingRule &rule) const {
    llvm::SmallDenseSet<unsigned> factors;
    for (auto [v, dims] : describedValues(op, rule, /*withUnread=*/true))
      if (std::optional<Place> p = placeOf(v); p && !(*dims)[p->dim].empty())
        if (std::optional<Carrier> c = carrierOf(rule, (*dims)[p->dim], *p))
          factors.insert(c->factor);
    return factors;
  }

  /// The factor of a dimension made of `factors` (major first) whose index
  /// holds the batch at `p`, and where: the one whose index range contains
  /// the batch's whole. None when the dimension's factors cut through the
  /// batch (a reshape of B * L into (B / 2, 2 * L)).
  static std::optional<Carrier> carrierOf(const ShardingRule &rule,
                                          ArrayRef<unsigned> factors, Place p) {
    std::optional<Carrier> found;
    int64_t below = 1;
    for (unsigned f : llvm::reverse(factors)) {
      int64_t size = rule.factorSizes[f];
      if (size <= 0 || ShapedType::isDynamic(size))
        return std::nullopt;
      if (p.inner % below == 0) {
        int64_t inner = p.inner / below;
        // With a batch of more than one example, one factor at most; with
        // one, the first that is not a unit dimension (a collapse of 1 x B
        // puts a unit factor above the batch).
        if (size % (inner * p.size) == 0 && (!found || size != 1))
          found = Carrier{f, inner, p.size, inner * p.size == size};
      }
      below *= size;
    }
    if (found || !p.major)
      return found;
    // A major place regrouped ((B, 4) -> (B * 4) -> (4, B)): its
    // micro-batches are contiguous parts of the dimension, so of its first
    // factor that is not a unit dimension (a collapse of 1 x B puts a unit
    // factor above the batch), the whole factor cut alike.
    unsigned first = factors.front();
    for (unsigned f : factors)
      if (rule.factorSizes[f] != 1) {
        first = f;
        break;
      }
    return Carrier{first, 1, rule.factorSizes[first], /*major=*/true};
  }

  /// After the function is retyped to micro-batches of `1 / parts` of the
  /// batch: where they are.
  void divideBatch(int64_t parts) {
    for (auto &entry : places)
      entry.second.size /= parts;
  }

private:
  /// Marks `v` as holding the batch at `p`; fails on a second, different
  /// place.
  FailureOr<bool> mark(Operation *op, Value v, Place p) {
    // Only inputs and labels are cut into micro-batches; a parameter with
    // one entry per example would need its slice per micro-batch too.
    if (isArgument(v) && !places.count(v)) {
      return op->emitError()
             << "cannot split the batch: " << describe(v)
             << " meets it here along its dimension " << p.dim
             << " (one entry per example), but only inputs and labels are "
                "cut into micro-batches";
    }
    auto [it, inserted] = places.try_emplace(v, p);
    if (inserted || it->second == p)
      return inserted;
    InFlightDiagnostic diag = op->emitError()
                              << "cannot split the batch through this op: "
                              << describe(v) << " would be batched ";
    if (it->second.dim != p.dim)
      return diag << "along dimensions " << it->second.dim << " and " << p.dim;
    return diag << "at two places of its dimension " << p.dim
                << " (examples every " << it->second.inner << " and every "
                << p.inner << " positions)";
  }

  /// The batch follows the op's sharding rule: it is one factor, and every
  /// dimension led by that factor holds it.
  FailureOr<bool> visit(Operation *op) {
    if (auto concat = dyn_cast<tensor::ConcatOp>(op))
      if (std::optional<Place> piece = stackedPlace(concat))
        return visitStack(concat, *piece);
    if (auto iface = dyn_cast<ShardingRuleOpInterface>(op))
      if (FailureOr<ShardingRule> rule = iface.getShardingRule();
          succeeded(rule))
        return visitRule(op, *rule);
    if (isa<func::ReturnOp>(op))
      return false;
    auto batched = [&](ValueRange values) {
      return llvm::any_of(values,
                          [&](Value v) { return placeOf(v).has_value(); });
    };
    // Leaves hold no data to cut (a constant of distinct values is
    // refused where it is retyped).
    bool reads = batched(op->getOperands());
    if (!reads &&
        (isa<tensor::EmptyOp, tensor::SplatOp, arith::ConstantOp>(op) ||
         !batched(op->getResults())))
      return false;
    return op->emitError()
           << "cannot split the batch through '" << op->getName() << "': it "
           << (reads ? "reads" : "makes")
           << " a batched value without a sharding rule saying how, so each "
              "micro-batch would "
           << (reads ? "read its own rows where the whole batch's were meant"
                     : "make the first rows of the whole batch's")
           << " (a micro-batch holds only its rows; compute it with linalg "
              "ops over the batch, or without micro-batches)";
  }

  /// A concatenation of equal pieces along the dimension that holds each
  /// one's batch whole (torch-mlir stacks a GRU's or LSTM's final states
  /// of k layers as k pieces (B, H) into (k * B, H)): each micro-batch is
  /// the same part of every piece, so the result holds the batch below
  /// the piece index. Where each piece holds it (the finest of the pieces'
  /// places, see Place; else where the result says); none where `concat`
  /// is no such stack, and its sharding rule says whether it needs the
  /// batch whole.
  std::optional<Place> stackedPlace(tensor::ConcatOp concat) {
    int64_t dim = concat.getDim();
    auto pieces = concat.getInputs();
    int64_t extent =
        cast<RankedTensorType>(pieces.front().getType()).getDimSize(dim);
    if (ShapedType::isDynamic(extent) || llvm::any_of(pieces, [&](Value v) {
          return cast<RankedTensorType>(v.getType()).getDimSize(dim) != extent;
        }))
      return std::nullopt;
    std::optional<Place> piece;
    for (Value v : pieces)
      if (std::optional<Place> p = placeOf(v)) {
        if (p->dim != dim || !p->major)
          return std::nullopt;
        if (!piece || p->size < piece->size)
          piece = p;
      }
    if (piece)
      return piece;
    if (std::optional<Place> r = placeOf(concat.getResult());
        r && r->dim == dim && !r->major && r->inner * r->size == extent)
      return Place{dim, r->inner, r->size, /*major=*/true};
    return std::nullopt;
  }

  FailureOr<bool> visitStack(tensor::ConcatOp concat, Place piece) {
    bool changed = false;
    for (Value v : concat.getInputs()) {
      FailureOr<bool> m = mark(concat, v, piece);
      if (failed(m))
        return failure();
      changed |= *m;
    }
    bool one = concat.getInputs().size() == 1;
    FailureOr<bool> m = mark(concat, concat.getResult(),
                             Place{piece.dim, piece.inner, piece.size, one});
    if (failed(m))
      return failure();
    return changed || *m;
  }

  /// A batched tensor read inside `op`'s regions that its sharding rule
  /// does not describe (any, for an op without one): a micro-batch would
  /// read its own rows at the whole batch's positions.
  LogicalResult checkBodyReads(Operation *op) {
    if (op->getNumRegions() == 0)
      return success();
    FailureOr<ShardingRule> rule = failure();
    if (auto iface = dyn_cast<ShardingRuleOpInterface>(op))
      rule = iface.getShardingRule();
    llvm::SetVector<Value> reads;
    for (Region &region : op->getRegions())
      getUsedValuesDefinedAbove(region, reads);
    for (Value v : reads)
      if (placeOf(v) && (failed(rule) ||
                         llvm::none_of(rule->captured,
                                       [&](auto &c) { return c.first == v; })))
        return op->emitError()
               << "cannot split the batch: this op reads " << describe(v)
               << " inside its region, at positions of the whole batch";
    return success();
  }

  bool isArgument(Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner()->getParentOp() == fn;
  }

  /// Why an input's dimension 0 was taken for the batch, and the way out.
  static constexpr const char *kHoldsNoBatch =
      "; every input and label is cut into micro-batches along its "
      "dimension 0, so one that holds no batch (a mask or positions shared "
      "by the examples) is model state instead: a parameter that is not "
      "trained (epl.param(..., trainable=False); in PyTorch, a buffer or a "
      "parameter with requires_grad=False), or a constant; one whose batch "
      "is another dimension (a seq-first (L, B, E) input) is given "
      "batch-first (epl.torch.export's batch_dims)";

  /// Where a value computed from the inputs needs the batch whole: the
  /// usual cause is a seq-first input, whose dimension 0 is its sequence.
  static constexpr const char *kNotBatchFirst =
      "; every input and label is cut into micro-batches along its "
      "dimension 0: one whose batch is another dimension (a seq-first (L, B, "
      "E) input of nn.LSTM, nn.GRU or nn.MultiheadAttention) is given "
      "batch-first (epl.torch.export's batch_dims)";

  /// The argument `v` is a reshape of (torch's unsqueeze of an input),
  /// else `v`.
  Value reshapedFrom(Value v) {
    while (Operation *def = v.getDefiningOp()) {
      if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp>(
              def))
        break;
      v = def->getOperand(0);
    }
    return isArgument(v) ? v : Value();
  }

  /// "input 'mask'" (of a reshape of it: "input 'w', reshaped to ..."), or
  /// the value's type when it is no argument.
  std::string describe(Value v) {
    std::string text;
    llvm::raw_string_ostream os(text);
    if (Value arg = reshapedFrom(v)) {
      unsigned n = cast<BlockArgument>(arg).getArgNumber();
      os << getArgKind(fn, n) << " '" << getArgName(fn, n) << "'";
      if (arg != v)
        os << ", reshaped to " << v.getType() << ",";
    } else {
      os << "a value of type " << v.getType();
    }
    return text;
  }

  /// Operands that bring the batch on different loops (or at different
  /// strides of one): examples would meet examples of other micro-batches.
  /// The usual cause is an input without a batch dimension (a mask or
  /// positions, one per model), whose first dimension is taken for the
  /// batch; or a seq-first model fed its sequence first.
  LogicalResult reportTwoBatches(Operation *op, const ShardingRule &rule) {
    InFlightDiagnostic diag = op->emitError()
                              << "cannot split the batch through this op: its "
                                 "operands batch different loops (";
    SmallVector<Carrier> seen;
    bool first = true, fedArgument = false;
    for (auto [v, dims] : describedValues(op, rule, /*withUnread=*/true)) {
      std::optional<Place> p = placeOf(v);
      if (!p || (*dims)[p->dim].empty())
        continue;
      std::optional<Carrier> c = carrierOf(rule, (*dims)[p->dim], *p);
      if (!c || llvm::is_contained(seen, *c))
        continue;
      seen.push_back(*c);
      diag << (first ? "" : ", ") << describe(v);
      if (!llvm::is_contained(op->getOperands(), v))
        diag << " (read in its body)";
      diag << " along its dimension " << p->dim;
      first = false;
      fedArgument |= static_cast<bool>(reshapedFrom(v));
    }
    if (fedArgument)
      diag << ")" << kHoldsNoBatch;
    else
      diag << "): examples would meet the examples of other micro-batches, "
              "which micro-batches cannot reproduce"
           << kNotBatchFirst;
    return diag;
  }

  FailureOr<bool> visitRule(Operation *op, const ShardingRule &rule) {
    auto values = describedValues(op, rule, /*withUnread=*/true);
    SmallVector<Carrier> carriers;
    for (auto [v, dims] : values) {
      std::optional<Place> p = placeOf(v);
      if (!p)
        continue;
      if ((*dims)[p->dim].empty()) {
        InFlightDiagnostic diag =
            op->emitError()
            << "cannot split the batch: this op does not keep dimension "
            << p->dim << " of " << describe(v)
            << " as a dimension (it is indexed by an expression, or joined "
               "along)";
        if (reshapedFrom(v))
          diag << kHoldsNoBatch;
        return diag;
      }
      std::optional<Carrier> c = carrierOf(rule, (*dims)[p->dim], *p);
      if (!c)
        return op->emitError()
               << "cannot split the batch: this op cuts dimension " << p->dim
               << " of " << describe(v) << " across its batch of " << p->size
               << " (a reshape whose groups divide the examples)";
      if (rule.factorKinds[c->factor] == ShardingRule::FactorKind::Whole) {
        InFlightDiagnostic diag =
            op->emitError("cannot split the batch: this op needs it whole (it "
                          "cuts, pads or joins along it, or reads positions "
                          "along it)");
        if (Value arg = reshapedFrom(v))
          diag << "; it is dimension 0 of " << describe(arg) << kHoldsNoBatch;
        else
          diag << kNotBatchFirst;
        return diag;
      }
      // Of one factor's major carriers, the finest (the least said to be
      // examples) passes more reshapes on.
      auto *same = llvm::find(carriers, *c);
      if (same == carriers.end())
        carriers.push_back(*c);
      else if (c->size < same->size)
        *same = *c;
    }
    if (carriers.empty())
      return false;
    if (carriers.size() > 1)
      return reportTwoBatches(op, rule);
    const Carrier &batch = carriers.front();
    bool changed = false;
    for (auto [v, dims] : values)
      for (auto [pos, factors] : llvm::enumerate(*dims)) {
        int64_t below = 1;
        for (unsigned f : llvm::reverse(factors)) {
          if (f == batch.factor) {
            int64_t inner = batch.inner * below;
            int64_t extent =
                cast<RankedTensorType>(v.getType()).getDimSize(pos);
            FailureOr<bool> m =
                mark(op, v,
                     Place{static_cast<int64_t>(pos), inner, batch.size,
                           extent == inner * batch.size});
            if (failed(m))
              return failure();
            changed |= *m;
          }
          below *= rule.factorSizes[f];
        }
      }
    return changed;
  }

  func::FuncOp fn;
  ArrayRef<BlockArgument> whole;
  llvm::DenseMap<Value, Place> places;
};

/// Micro-batches compute the loss of each micro-batch and add them up,
/// which equals the loss of the whole batch exactly when every statistic
/// over the batch is a sum that reaches the loss linearly (a mean is a sum
/// scaled by a constant). Anything else (a batch mean subtracted from each
/// example, a max over the batch, a constant added to the loss) would
/// silently change the result: it is an error naming the op.
class BatchLinearity {
public:
  BatchLinearity(func::FuncOp fn, const BatchAnalysis &batch, int64_t parts)
      : fn(fn), batch(batch), parts(parts) {}

  LogicalResult run() {
    for (Operation &op : fn.front())
      if (failed(visit(&op)))
        return failure();
    return success();
  }

private:
  InFlightDiagnostic fail(Operation *op, const Twine &why, Value statistic) {
    InFlightDiagnostic diag =
        op->emitError() << "cannot split the batch into " << parts
                        << " micro-batches (pipeline.num_micro_batch): " << why
                        << "; micro-batches reproduce only sums over the "
                           "batch that reach the loss linearly";
    if (statistic)
      diag.attachNote(origin.lookup(statistic)->getLoc())
          << "the statistic over the whole batch is computed here";
    return diag;
  }

  LogicalResult visit(Operation *op) {
    if (auto g = dyn_cast<linalg::GenericOp>(op))
      return visitGeneric(g);
    Value statistic;
    for (Value v : op->getOperands())
      if (origin.count(v))
        statistic = v;
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      Value loss = ret.getOperand(0);
      if (!origin.count(loss) && !batch.dimOf(loss))
        return fail(op, "the loss does not depend on the batch", Value());
      return success();
    }
    if (!statistic)
      return success();
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp,
            tensor::ExtractSliceOp>(op)) {
      origin[op->getResult(0)] = origin.lookup(statistic);
      return success();
    }
    return fail(op,
                "'" + op->getName().getStringRef() +
                    "' uses a statistic over the whole batch",
                statistic);
  }

  LogicalResult visitGeneric(linalg::GenericOp op) {
    auto rule = cast<ShardingRuleOpInterface>(*op).getShardingRule();
    if (failed(rule))
      return fail(op, "this op has no sharding rule to follow the batch by",
                  Value());
    llvm::SmallDenseSet<unsigned> loops = batch.batchFactors(op, *rule);
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    bool reducesBatch = llvm::any_of(loops, [&](unsigned l) {
      return iterators[l] == utils::IteratorType::reduction;
    });
    Block &body = op.getRegion().front();
    if (reducesBatch) {
      Value acc = body.getArgument(op.getNumDpsInputs());
      Operation *comb = cast<linalg::YieldOp>(body.getTerminator())
                            .getOperand(0)
                            .getDefiningOp();
      // A sum: each example added, or subtracted (a negative
      // log-likelihood accumulated as acc - logp).
      bool sums =
          comb && ((isa<arith::AddFOp>(comb) &&
                    llvm::is_contained(comb->getOperands(), acc)) ||
                   (isa<arith::SubFOp>(comb) && comb->getOperand(0) == acc));
      if (!sums)
        return fail(op, "this op reduces over the batch other than by a sum",
                    Value());
    }
    // A statistic the body reads (a batch mean picked by a gather) would
    // be each micro-batch's own.
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(op.getRegion(), captured);
    for (Value v : captured)
      if (origin.count(v))
        return fail(op, "this op's body reads a statistic over the whole batch",
                    v);
    // Which block arguments carry a statistic over the whole batch.
    SmallVector<bool> linear(op->getNumOperands(), false);
    Value statistic;
    for (OpOperand &operand : op->getOpOperands()) {
      unsigned i = operand.getOperandNumber();
      if (origin.count(operand.get())) {
        statistic = operand.get();
        linear[i] = true;
      } else if (op.isDpsInit(&operand) &&
                 op.payloadUsesValueFromOperand(&operand) &&
                 (reducesBatch || statistic)) {
        // An accumulator must start at zero: a sum starting elsewhere adds
        // its start once per micro-batch.
        if (!isZeroTensor(operand.get()))
          return fail(op,
                      "this sum over the batch starts from a value that is "
                      "not zero",
                      statistic);
        linear[i] = true;
      }
    }
    if (reducesBatch) {
      if (statistic)
        return fail(op,
                    "this sum over the batch combines the examples with a "
                    "statistic over the whole batch",
                    statistic);
      origin[op.getResult(0)] = op;
      return success();
    }
    if (!statistic)
      return success();
    if (!loops.empty())
      return fail(op,
                  "this op combines each example with a statistic over the "
                  "whole batch",
                  statistic);
    // Element-wise in the statistics: the body must be linear in them.
    Linearity result = linearityOf(op, linear);
    if (result == Linearity::Nonlinear)
      return fail(op,
                  "this op is not linear in a statistic over the whole batch "
                  "(a term added to it would be added once per micro-batch, "
                  "a product or a power of it would change)",
                  statistic);
    if (result == Linearity::Linear)
      origin[op.getResult(0)] = origin.lookup(statistic);
    return success();
  }

  func::FuncOp fn;
  const BatchAnalysis &batch;
  int64_t parts;
  /// The statistics over the whole batch, and the op that computed each
  /// (its reduction over the batch).
  llvm::DenseMap<Value, Operation *> origin;
};

/// Whether `op` makes a tensor from nothing but scalars: a tensor.empty, a
/// tensor constant, or a fill of an empty tensor (linalg.fill, or the
/// generic torch-mlir writes).
bool isLeaf(Operation *op) {
  if (isa<tensor::EmptyOp>(op) ||
      (isa<arith::ConstantOp>(op) &&
       isa<RankedTensorType>(op->getResult(0).getType())))
    return true;
  auto fill = dyn_cast<linalg::LinalgOp>(op);
  return fill && fill.getNumDpsInits() == 1 &&
         llvm::none_of(fill.getDpsInputs(),
                       [](Value v) { return isa<ShapedType>(v.getType()); }) &&
         fill.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>() &&
         !fill.payloadUsesValueFromOperand(fill.getDpsInitOperand(0)) &&
         llvm::none_of(fill->getRegion(0).getOps(),
                       [](Operation &op) { return isa<linalg::IndexOp>(op); });
}

/// Each leaf (see `isLeaf`) gets its own copy per use, so that a value
/// shared by batched and unbatched ops can be retyped for each; after CSE
/// one zero-filled tensor<64xf32> may start both a mean over 64 features
/// and a score per example of a batch of 64.
void unshareLeaves(func::FuncOp fn) {
  SmallVector<Operation *> leaves;
  for (Operation &op : fn.front())
    if (isLeaf(&op))
      leaves.push_back(&op);
  // Fills before the empty tensors they fill: each copy of a fill then
  // gets its own empty tensor too.
  std::stable_partition(leaves.begin(), leaves.end(), [](Operation *op) {
    return !isa<tensor::EmptyOp, arith::ConstantOp>(op);
  });
  for (Operation *leaf : leaves) {
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : leaf->getUses())
      uses.push_back(&use);
    for (OpOperand *use : ArrayRef<OpOperand *>(uses).drop_front(
             std::min<size_t>(1, uses.size()))) {
      OpBuilder b(leaf);
      use->set(b.clone(*leaf)->getResult(0));
    }
  }
}
} // namespace

LogicalResult mlir::epl::splitBatch(func::FuncOp model, int64_t parts,
                                    ArrayRef<BlockArgument> wholeBatch) {
  if (failed(verifyUpstreamGapsIn(model, "micro-batches")))
    return failure();
  unshareLeaves(model);
  BatchAnalysis analysis(model, wholeBatch);
  if (failed(analysis.run()))
    return failure();

  // The batch as the model's inputs hold it.
  int64_t wholeBatchSize = 0;
  for (BlockArgument arg : model.getArguments())
    if (std::optional<Place> p = analysis.placeOf(arg); p && !wholeBatchSize)
      wholeBatchSize = p->size;
  auto shrink = [&](Operation *where, Value v) -> LogicalResult {
    std::optional<Place> p = analysis.placeOf(v);
    if (!p)
      return success();
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape(type.getShape());
    if (ShapedType::isDynamic(shape[p->dim]) || p->size % parts != 0) {
      InFlightDiagnostic diag = where->emitError();
      if (p->major && p->size != wholeBatchSize)
        // A reshape regrouped the batch (8x3 -> 24 -> 3x8): the micro-batch
        // is a block of the leading dimension, which must divide too.
        diag << "cannot split the batch of " << wholeBatchSize << " into "
             << parts << " micro-batches (pipeline.num_micro_batch) here: a "
             << "reshape regroups it into dimension " << p->dim
             << " of this value, of size " << p->size << ", which " << parts
             << " parts do not divide";
      else
        diag << "cannot split a batch of " << p->size << " into " << parts
             << " micro-batches (pipeline.num_micro_batch)";
      return diag;
    }
    shape[p->dim] /= parts;
    v.setType(type.clone(shape));
    return success();
  };

  Block &body = model.front();
  for (BlockArgument arg : body.getArguments())
    if (failed(shrink(model, arg)))
      return failure();
  for (Operation &op : body) {
    for (Value r : op.getResults())
      if (failed(shrink(&op, r)))
        return failure();
    // Ops whose attributes repeat their shapes.
    if (auto iface = dyn_cast<ShardingRuleOpInterface>(op))
      iface.adaptToLocalTypes();
    if (auto c = dyn_cast<arith::ConstantOp>(op))
      if (analysis.dimOf(c.getResult())) {
        auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
        if (!dense || !dense.isSplat())
          return op.emitError("cannot split the batch of a non-splat "
                              "constant");
        c.setValueAttr(DenseElementsAttr::get(
            cast<ShapedType>(c.getType()), dense.getSplatValue<Attribute>()));
      }
  }
  analysis.divideBatch(parts);
  // One micro-batch is the whole batch: every statistic over it is exact.
  if (parts > 1 && failed(BatchLinearity(model, analysis, parts).run()))
    return failure();
  auto resultTypes = body.getTerminator()->getOperandTypes();
  model.setType(FunctionType::get(model.getContext(), body.getArgumentTypes(),
                                  SmallVector<Type>(resultTypes)));
  if (failed(verify(model)))
    return model.emitError()
           << "cannot split the batch of @" << model.getSymName() << " into "
           << parts << " micro-batches";
  return success();
}

SmallVector<Value> mlir::epl::wholeBatchStatistics(func::FuncOp model) {
  unshareLeaves(model);
  // What depends on a parameter or state, and what on the data.
  llvm::DenseSet<Value> learned, data;
  for (BlockArgument arg : model.getArguments()) {
    StringRef kind = getArgKind(model, arg.getArgNumber());
    (kind == "input" || kind == "label" ? data : learned).insert(arg);
  }
  // Where the batch is: a statistic holds none. Where the batch cannot be
  // followed, only scalars are taken; splitBatch reports why later.
  std::optional<BatchAnalysis> batch;
  {
    ScopedDiagnosticHandler quiet(model.getContext(),
                                  [](Diagnostic &) { return success(); });
    batch.emplace(model);
    if (failed(batch->run()))
      batch.reset();
  }
  SmallVector<Value> candidates;
  for (Operation &op : model.front()) {
    llvm::SetVector<Value> reads(op.getOperands().begin(),
                                 op.getOperands().end());
    for (Region &region : op.getRegions())
      getUsedValuesDefinedAbove(region, reads);
    bool fromLearned =
        llvm::any_of(reads, [&](Value v) { return learned.contains(v); });
    bool fromData =
        llvm::any_of(reads, [&](Value v) { return data.contains(v); });
    for (Value r : op.getResults()) {
      if (fromLearned)
        learned.insert(r);
      if (fromData)
        data.insert(r);
    }
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (fromLearned || !fromData || !linalgOp ||
        linalgOp.getNumReductionLoops() == 0)
      continue;
    for (Value r : op.getResults())
      if (auto type = dyn_cast<RankedTensorType>(r.getType());
          type && !r.use_empty() &&
          (type.getRank() == 0 || (batch && !batch->dimOf(r))))
        candidates.push_back(r);
  }
  // A result computed from the data alone stays each micro-batch's own:
  // the step sums the micro-batches' results, so one computed from a
  // whole-batch statistic would count it once per micro-batch.
  llvm::SetVector<Operation *> perMicroBatch = opsComputing(llvm::to_vector(
      llvm::make_filter_range(model.front().getTerminator()->getOperands(),
                              [&](Value r) { return !learned.contains(r); })));
  SmallVector<Value> statistics;
  for (Value v : candidates)
    if (!perMicroBatch.contains(v.getDefiningOp()))
      statistics.push_back(v);
  return statistics;
}

llvm::SetVector<Operation *> mlir::epl::opsComputing(ArrayRef<Value> values) {
  llvm::SetVector<Operation *> ops;
  BackwardSliceOptions slice;
  slice.omitBlockArguments = true;
  slice.omitUsesFromAbove = false;
  slice.inclusive = true;
  for (Value v : values)
    (void)getBackwardSlice(v, &ops, slice);
  return ops;
}

void mlir::epl::takeAsArguments(func::FuncOp micro,
                                ArrayRef<Value> statistics) {
  Block &body = micro.front();
  unsigned first = body.getNumArguments();
  for (Value v : statistics)
    v.replaceAllUsesWith(body.addArgument(v.getType(), v.getLoc()));
  // (The type first: argument attributes are as many as its inputs.)
  micro.setType(FunctionType::get(micro.getContext(), body.getArgumentTypes(),
                                  micro.getResultTypes()));
  // Data that gets no gradient, which splitBatch does not cut.
  for (unsigned i = 0; i < statistics.size(); ++i)
    micro.setArgAttrs(
        first + i,
        getKindAndName(micro.getContext(), EPLDialect::kArgAttrName, "input",
                       "whole-batch statistic #" + std::to_string(i)));
  // What computed them alone is dead now.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    if (isOpTriviallyDead(&op))
      op.erase();
}
