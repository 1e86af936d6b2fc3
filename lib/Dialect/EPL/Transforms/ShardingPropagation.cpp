//===- ShardingPropagation.cpp - A sharding for every value ---------------===//
//
// Part of EPL-MLIR.
//
// A driver over the ops' sharding rules (ShardingRuleOpInterface): for each
// op, the mesh axes of its factors come from whichever of its values are
// known, and carry to the others. Each sharded dimension of a value
// remembers the strength of the evidence it came from (a user's
// constraint over a seed of epl-plan); a dimension is revised only by
// stronger evidence, and an unsharded one is sharded by any, so an op
// visited before the strongest evidence reached it is revisited and
// revised: the result does not depend on visit order. Evidence never
// unshards a dimension; the iteration stops at a fixed point (each
// dimension changes at most once per priority).
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/IR/EPLDialect.h"
#include "epl/Dialect/EPL/Transforms/Passes.h"
#include "epl/Dialect/EPL/Transforms/ShardingUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#define DEBUG_TYPE "epl-sharding-propagation"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLSHARDINGPROPAGATIONPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;
using namespace mlir::epl;

namespace {
/// Evidence, strongest first: a user's constraint (on the value it
/// constrains), a seed of epl-plan or the user (on the argument it seeds),
/// then anything propagated, the closer to its source the stronger (by
/// hops through ops; at equal distance, what came from a user constraint).
/// A propagated sharding never overrides a seed: Megatron's weight split
/// holds against a sequence-parallel constraint reaching the same op.
constexpr int kUser = 3 << 20, kSeed = 2 << 20, kPropagated = 1 << 20;

/// The priority of what `p` implies one op away.
int derived(int p) {
  if (p <= 0)
    return 0; // No evidence.
  if (p >= kUser)
    return kPropagated - 1;
  if (p >= kSeed)
    return kPropagated - 2;
  return p - 2;
}

class Propagation {
public:
  Propagation(func::FuncOp fn, MeshOp mesh, bool explain)
      : fn(fn), mesh(mesh), explain(explain) {}

  LogicalResult run(int64_t &numSharded, int64_t &numConflicts) {
    for (BlockArgument arg : fn.getArguments())
      if (auto s = fn.getArgAttrOfType<ShardingAttr>(
              arg.getArgNumber(), EPLDialect::kShardingAttrName))
        seed(arg, Layout::of(s), kSeed);
    // Ops in program order; a loop is visited before its body and again
    // after it, to carry what the body found to its results.
    SmallVector<Operation *> ops, visits;
    std::function<LogicalResult(Block &)> collect =
        [&](Block &block) -> LogicalResult {
      for (Operation &op : block) {
        if (isa<func::CallOp>(op))
          return op.emitError("epl-sharding-propagation: cannot shard "
                              "through a call; inline it first");
        if (auto c = dyn_cast<ShardingConstraintOp>(op))
          seed(c.getResult(), Layout::of(c.getSharding()), kUser);
        if (auto iface = dyn_cast<ShardingRuleOpInterface>(op))
          if (FailureOr<ShardingRule> rule = iface.getShardingRule();
              succeeded(rule))
            rules.try_emplace(&op, std::move(*rule));
        ops.push_back(&op);
        visits.push_back(&op);
        if (auto loop = dyn_cast<scf::ForOp>(op)) {
          if (failed(collect(*loop.getBody())))
            return failure();
          visits.push_back(&op);
        }
      }
      return success();
    };
    if (failed(collect(fn.front())))
      return failure();

    for (bool changed = true; changed;) {
      changed = false;
      for (Operation *op : visits)
        changed |= visit(op);
      for (Operation *op : llvm::reverse(visits))
        changed |= visit(op);
    }

    // Each op's results are what its factors make of them, so that every
    // op is consistent on its own; where a user wants another sharding,
    // epl-insert-collectives reshards.
    MLIRContext *ctx = fn.getContext();
    for (Operation *op : ops) {
      auto it = rules.find(op);
      if (it == rules.end())
        continue;
      Decision d = decide(op, it->second);
      numConflicts += d.conflict;
      SmallVector<Attribute> factors;
      for (const AxisList &axes : d.factors)
        factors.push_back(axesAttr(ctx, axes));
      op->setAttr(kLoopAxesAttrName, ArrayAttr::get(ctx, factors));
      if (explain)
        explainDecision(op, d);
      for (auto [i, r] : llvm::enumerate(op->getResults()))
        if (!isCheap(r, &cheap)) {
          Proposal p = implied(op, it->second, d, /*operand=*/false, i);
          known[r] = {p.layout, p.dims, p.partial};
        }
    }
    for (Operation *op : ops) {
      SmallVector<Attribute> results;
      bool any = false;
      for (Value r : op->getResults()) {
        if (!isa<RankedTensorType>(r.getType())) {
          results.push_back(UnitAttr::get(ctx));
          continue;
        }
        Layout l = layoutOf(r);
        numSharded += !l.isReplicated();
        any = true;
        results.push_back(l.toAttr(ctx, mesh.getSymName()));
      }
      if (any)
        op->setAttr(kShardingsAttrName, ArrayAttr::get(ctx, results));
    }
    // All at once: setting one argument's attributes rebuilds the list.
    SmallVector<DictionaryAttr> argAttrs;
    fn.getAllArgAttrs(argAttrs);
    for (BlockArgument arg : fn.getArguments())
      if (isa<RankedTensorType>(arg.getType())) {
        NamedAttrList attrs(argAttrs[arg.getArgNumber()]);
        attrs.set(EPLDialect::kShardingAttrName,
                  layoutOf(arg).toAttr(ctx, mesh.getSymName()));
        argAttrs[arg.getArgNumber()] = attrs.getDictionary(ctx);
      }
    fn.setAllArgAttrs(argAttrs);
    auto ret = cast<func::ReturnOp>(fn.front().getTerminator());
    FunctionAttrEdit edit(fn);
    for (auto [i, v] : llvm::enumerate(ret.getOperands()))
      if (isa<RankedTensorType>(v.getType()))
        edit.setResult(i, EPLDialect::kShardingAttrName,
                       resultLayout(i, v).toAttr(ctx, mesh.getSymName()));
    edit.apply();
    return success();
  }

private:
  /// A value's layout, and the priority of the evidence for each of its
  /// dimensions and for its partial state (0: none yet).
  struct Known {
    Layout layout;
    SmallVector<int> dims;
    int partial = 0;
  };
  /// What an op's known values say about its factors.
  struct Decision {
    SmallVector<AxisList> factors;
    /// The priority of the evidence that sharded each factor, and the
    /// value it came from.
    SmallVector<int> priorities;
    SmallVector<Value> sources;
    bool conflict = false;
    /// The partial sum axes an element-wise op linear in its partial sums
    /// keeps, the priority of that evidence, and which operands carry it.
    std::optional<AxisList> linearSum;
    int linearSumPriority = 0;
    SmallVector<bool> linearOperands;
  };
  /// A layout and the priority of each of its parts, as `Known`.
  struct Proposal {
    Layout layout;
    SmallVector<int> dims;
    int partial = 0;
  };

  Layout layoutOf(Value v) const {
    auto it = known.find(v);
    if (it != known.end())
      return it->second.layout;
    return Layout::replicated(cast<RankedTensorType>(v.getType()).getRank());
  }
  bool has(Value v) const { return known.count(v); }

  /// A whole layout from one source (an argument's seed, a constraint):
  /// all its dimensions, sharded or not, at `priority`.
  bool seed(Value v, const Layout &l, int priority) {
    return propose(v, {l, SmallVector<int>(l.dims.size(), priority), priority});
  }

  /// Merges proposal `p` into what is known of `v`: a dimension nobody
  /// sharded yet takes the proposal's axes; a sharded one changes only for
  /// stronger evidence. Cheap values carry no data: each user makes its
  /// own (see isCheap).
  bool propose(Value v, const Proposal &p) {
    if (isCheap(v, &cheap))
      return false;
    auto [it, inserted] = known.try_emplace(v);
    Known &k = it->second;
    if (inserted) {
      k.layout = Layout::replicated(p.layout.dims.size());
      k.dims.assign(p.layout.dims.size(), 0);
    }
    bool changed = inserted;
    for (auto [d, axes] : llvm::enumerate(p.layout.dims)) {
      AxisList &cur = k.layout.dims[d];
      bool stronger = p.dims[d] > k.dims[d];
      if ((axes.empty() && !stronger) || cur == axes ||
          (!cur.empty() && !stronger))
        continue;
      // An axis splits one dimension of a value.
      if (llvm::any_of(axes, [&](StringRef a) {
            return llvm::any_of(llvm::enumerate(k.layout.dims), [&](auto e) {
              return e.index() != d && llvm::is_contained(e.value(), a) &&
                     k.dims[e.index()] >= p.dims[d];
            });
          }))
        continue;
      // Nor a dimension and the pending partial state.
      bool partialClash = llvm::any_of(axes, [&](StringRef a) {
        return llvm::is_contained(k.layout.partial, a);
      });
      if (partialClash && p.dims[d] <= k.partial)
        continue;
      if (partialClash)
        k.layout.partial.clear();
      for (auto [e, other] : llvm::enumerate(k.layout.dims))
        if (e != d)
          llvm::erase_if(
              other, [&](StringRef a) { return llvm::is_contained(axes, a); });
      cur = axes;
      k.dims[d] = p.dims[d];
      changed = true;
    }
    // A pending partial state, like a dimension, is set by any evidence
    // and changed by stronger evidence only; it is never cleared (the
    // final sweep gives each result exactly what its op makes).
    if (!p.layout.partial.empty() &&
        (k.layout.partial.empty() || p.partial > k.partial) &&
        llvm::none_of(k.layout.dims,
                      [&](const AxisList &axes) {
                        return llvm::any_of(axes, [&](StringRef a) {
                          return llvm::is_contained(p.layout.partial, a);
                        });
                      }) &&
        (k.layout.partial != p.layout.partial ||
         k.layout.kind != p.layout.kind)) {
      k.layout.partial = p.layout.partial;
      k.layout.kind = p.layout.kind;
      k.partial = p.partial;
      changed = true;
    }
    return changed;
  }

  /// The mesh axes of each factor of `op`, from its known values: the
  /// strongest evidence first, then the bigger tensor (moving it would
  /// cost the most), then operand order. An axis shards one factor; only
  /// the major factor of a dimension may be sharded (a dimension split
  /// into blocks of a minor factor is no block of the dimension).
  Decision decide(Operation *op, const ShardingRule &rule) {
    // Every sharded dimension of a known value is evidence for its major
    // factor.
    struct Evidence {
      unsigned factor;
      AxisList axes;
      int priority;
      int64_t bytes;
      Value from;
    };
    SmallVector<Evidence> evidence;
    for (auto [v, dims] : describedValues(op, rule)) {
      auto it = known.find(v);
      if (it == known.end())
        continue;
      for (auto [pos, factors] : llvm::enumerate(*dims))
        if (!factors.empty() && !it->second.layout.dims[pos].empty())
          evidence.push_back({factors.front(), it->second.layout.dims[pos],
                              it->second.dims[pos], bytesOf(v), v});
    }
    llvm::stable_sort(evidence, [](const Evidence &a, const Evidence &b) {
      if (a.priority != b.priority)
        return a.priority > b.priority;
      return a.bytes > b.bytes;
    });
    Decision d;
    d.factors.resize(rule.factorSizes.size());
    d.priorities.assign(rule.factorSizes.size(), 0);
    d.sources.assign(rule.factorSizes.size(), Value());
    llvm::SmallDenseSet<StringRef> used;
    for (const Evidence &e : evidence) {
      int64_t size = rule.factorSizes[e.factor];
      if (rule.factorKinds[e.factor] == ShardingRule::FactorKind::Whole ||
          ShapedType::isDynamic(size) || size % groupSize(mesh, e.axes) != 0)
        continue;
      if (!d.factors[e.factor].empty() ||
          llvm::any_of(e.axes, [&](StringRef a) { return used.contains(a); })) {
        d.conflict |= d.factors[e.factor] != e.axes;
        continue;
      }
      d.factors[e.factor] = e.axes;
      d.priorities[e.factor] = e.priority;
      d.sources[e.factor] = e.from;
      used.insert(e.axes.begin(), e.axes.end());
    }
    for (auto [v, dims] : describedValues(op, rule))
      for (const ShardingRule::Dim &dim : *dims)
        for (unsigned f : ArrayRef<unsigned>(dim).drop_front(
                 std::min<size_t>(1, dim.size())))
          if (!d.factors[f].empty()) {
            d.factors[f].clear();
            d.priorities[f] = 0;
            d.conflict = true;
          }
    d.linearSum = linearSum(op, d);
    // A dimension and the partial state cannot share an axis.
    if (d.linearSum && llvm::any_of(d.factors, [&](const AxisList &axes) {
          return llvm::any_of(axes, [&](StringRef a) {
            return llvm::is_contained(*d.linearSum, a);
          });
        }))
      d.linearSum.reset();
    return d;
  }

  int64_t bytesOf(Value v) const {
    auto type = cast<RankedTensorType>(v.getType());
    // `index` has no fixed width; it is 64 bits on every target we run.
    Type element = type.getElementType();
    return type.getNumElements() *
           (element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 64);
  }

  /// The partial-sum axes an element-wise op keeps when it is linear in its
  /// partial-sum operands: a sum of partial sums is a partial sum
  /// (gradients accumulated over micro-batches stay unreduced until the
  /// update), and so is one scaled (a mean's division).
  std::optional<AxisList> linearSum(Operation *op, Decision &d) {
    auto g = dyn_cast<linalg::GenericOp>(op);
    if (!g || g.getNumReductionLoops() != 0 || g.getNumDpsInits() != 1 ||
        g.payloadUsesValueFromOperand(g.getDpsInitOperand(0)))
      return std::nullopt;
    std::optional<AxisList> partial;
    d.linearOperands.assign(op->getNumOperands(), false);
    for (OpOperand *in : g.getDpsInputOperands()) {
      Value v = in->get();
      unsigned i = in->getOperandNumber();
      if (!isa<RankedTensorType>(v.getType()) || isCheap(v, &cheap))
        continue; // the same on every device: a constant of the sum
      // Unknown yet: only a loop's accumulator, which the sum then defines;
      // anything else waits until it is known.
      if (!has(v)) {
        auto arg = dyn_cast<BlockArgument>(v);
        if (!arg || !isa<scf::ForOp>(arg.getOwner()->getParentOp()))
          return std::nullopt;
        d.linearOperands[i] = true;
        continue;
      }
      const Known &k = known.find(v)->second;
      if (k.layout.partial.empty())
        continue;
      // A partial sum several ops read is reduced where it is made, once,
      // not on every path it would take on (the gradient an add passes to
      // both its operands: Megatron's block would reduce it per branch). A
      // loop's accumulator stays what the loop carries.
      if (k.layout.kind != ReductionKind::Sum ||
          (partial && *partial != k.layout.partial) ||
          (isa<OpResult>(v) && !llvm::hasSingleElement(v.getUsers())))
        return std::nullopt;
      partial = k.layout.partial;
      d.linearOperands[i] = true;
      d.linearSumPriority = std::max(d.linearSumPriority, k.partial);
    }
    // Linear jointly in the partial sums: the sum over devices of the
    // results is the result of the sums (a bias added would count once per
    // device, a product of two partial sums would not be one).
    if (!partial || linearityOf(g, d.linearOperands) != Linearity::Linear)
      return std::nullopt;
    return partial;
  }

  /// Reports `op`'s factors and, for each sharded one, which of its values
  /// decided it and how strong that evidence was (print-decisions).
  void explainDecision(Operation *op, const Decision &d) {
    InFlightDiagnostic remark = op->emitRemark()
                                << "factors sharded as "
                                << op->getAttr(kLoopAxesAttrName);
    for (auto [f, from] : llvm::enumerate(d.sources)) {
      if (!from)
        continue;
      remark << "; factor " << f << " from ";
      if (auto r = dyn_cast<OpResult>(from); r && r.getOwner() == op)
        remark << "result " << r.getResultNumber();
      else if (OpOperand *operand =
                   llvm::find_if(op->getOpOperands(),
                                 [&](OpOperand &o) { return o.get() == from; });
               operand != op->getOpOperands().end())
        remark << "operand " << operand->getOperandNumber();
      else
        remark << "a tensor its body reads";
      int p = d.priorities[f];
      if (p >= kUser)
        remark << " (a sharding constraint)";
      else if (p >= kSeed)
        remark << " (a seed)";
      else
        remark << " (propagated " << (kPropagated - p + 1) / 2
               << " op(s) from a "
               << ((kPropagated - p) % 2 ? "constraint" : "seed") << ")";
    }
  }

  /// The layout the decision gives a value whose dimensions are `dims`,
  /// without a partial state.
  Proposal impliedDims(const ShardingRule::Dims &dims, const Decision &d) {
    Proposal p{Layout::replicated(dims.size()), SmallVector<int>(dims.size()),
               0};
    for (auto [pos, factors] : llvm::enumerate(dims))
      if (!factors.empty()) {
        p.layout.dims[pos] = d.factors[factors.front()];
        if (!p.layout.dims[pos].empty())
          p.dims[pos] = derived(d.priorities[factors.front()]);
      }
    return p;
  }

  /// The layout the decision gives operand or result `index` of `op`.
  Proposal implied(Operation *op, const ShardingRule &rule, const Decision &d,
                   bool operand, unsigned index) {
    Proposal p =
        impliedDims(operand ? rule.operands[index] : rule.results[index], d);
    Layout &l = p.layout;
    if (d.linearSum) {
      if (!operand || d.linearOperands[index]) {
        l.partial = *d.linearSum;
        l.kind = ReductionKind::Sum;
        p.partial = derived(d.linearSumPriority);
      }
      return p;
    }
    if (operand)
      return p;
    for (auto [f, axes] : llvm::enumerate(d.factors))
      if (rule.factorKinds[f] == ShardingRule::FactorKind::Reduction &&
          !axes.empty()) {
        l.partial.append(axes.begin(), axes.end());
        p.partial = std::max(p.partial, derived(d.priorities[f]));
      }
    if (!l.partial.empty())
      l.kind = *rule.combiner;
    // A reshape or cast of a pending partial value stays pending.
    if (rule.passesPartial && l.partial.empty() && has(op->getOperand(0)) &&
        llvm::none_of(
            known.find(op->getOperand(0))->second.layout.partial,
            [&](StringRef a) { return llvm::is_contained(l.allAxes(), a); })) {
      const Known &in = known.find(op->getOperand(0))->second;
      l.partial = in.layout.partial;
      l.kind = in.layout.kind;
      p.partial = in.partial ? derived(in.partial) : 0;
    }
    return p;
  }

  bool visitRule(Operation *op, const ShardingRule &rule) {
    auto values = describedValues(op, rule);
    // Nothing known about any value: leave it to the others.
    if (llvm::none_of(values, [&](auto &p) { return has(p.first); }))
      return false;
    Decision d = decide(op, rule);
    bool changed = false;
    for (auto [i, v] : llvm::enumerate(op->getOperands())) {
      if (!describes(rule.operands[i], v) || rule.unread[i])
        continue;
      Proposal p = implied(op, rule, d, /*operand=*/true, i);
      // Backwards through a reshape, a pending partial value stays one.
      if (rule.passesPartial && has(op->getResult(0))) {
        const Known &out = known.find(op->getResult(0))->second;
        p.layout.partial = out.layout.partial;
        p.layout.kind = out.layout.kind;
        p.partial = out.partial ? derived(out.partial) : 0;
      }
      changed |= propose(v, p);
    }
    // A tensor the body reads is read whole from its pending sums.
    for (const auto &[v, dims] : rule.captured)
      changed |= propose(v, impliedDims(dims, d));
    for (auto [i, r] : llvm::enumerate(op->getResults()))
      changed |= propose(r, implied(op, rule, d, /*operand=*/false, i));
    return changed;
  }

  /// A loop-carried value, its initial value, what the body yields and
  /// the loop's result are one value: one layout, partial state included.
  bool visitLoop(scf::ForOp loop) {
    bool changed = false;
    for (unsigned i = 0; i < loop.getNumResults(); ++i) {
      Value tied[] = {loop.getYieldedValues()[i], loop.getRegionIterArgs()[i],
                      loop.getResult(i), loop.getInitArgs()[i]};
      if (!isa<RankedTensorType>(tied[0].getType()))
        continue;
      for (Value from : tied) {
        auto it = known.find(from);
        if (it == known.end())
          continue;
        Proposal p{it->second.layout, it->second.dims, it->second.partial};
        for (Value v : tied)
          changed |= propose(v, p);
      }
    }
    return changed;
  }

  bool visit(Operation *op) {
    if (auto loop = dyn_cast<scf::ForOp>(op))
      return visitLoop(loop);
    auto it = rules.find(op);
    return it != rules.end() && visitRule(op, it->second);
  }

  /// A result returned under the name of an argument (a new parameter,
  /// model or optimizer state) must be laid out like it, to feed the next
  /// step; a
  /// parameter's gradient like the parameter, to update it element-wise.
  Layout resultLayout(unsigned index, Value v) {
    // One given before propagation (epl-zero's sharded gradients) stays.
    if (auto given = fn.getResultAttrOfType<ShardingAttr>(
            index, EPLDialect::kShardingAttrName))
      return Layout::of(given);
    auto name =
        fn.getResultAttrOfType<StringAttr>(index, EPLDialect::kNameAttrName);
    auto kind =
        fn.getResultAttrOfType<StringAttr>(index, EPLDialect::kResultAttrName);
    if (name && kind &&
        (kind.getValue() == "param" || kind.getValue() == "opt_state" ||
         kind.getValue() == "state" || kind.getValue() == "grad"))
      for (BlockArgument arg : fn.getArguments())
        if (getArgName(fn, arg.getArgNumber()) == name.getValue())
          return layoutOf(arg);
    if (kind && kind.getValue() == "loss")
      return Layout::replicated(0);
    Layout l = layoutOf(v);
    l.partial.clear();
    return l;
  }

  func::FuncOp fn;
  MeshOp mesh;
  bool explain;
  llvm::DenseMap<Operation *, ShardingRule> rules;
  llvm::DenseMap<Value, Known> known;
  llvm::DenseMap<Value, bool> cheap;
};

struct EPLShardingPropagationPass
    : public mlir::epl::impl::EPLShardingPropagationPassBase<
          EPLShardingPropagationPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MeshOp mesh = getMesh(module);
    if (!mesh)
      return; // One device: nothing to propagate.
    if (failed(verifyUpstreamGapsIn(module, "epl-sharding-propagation")))
      return signalPassFailure();
    int64_t sharded = 0, conflicts = 0;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      Propagation propagation(fn, mesh, printDecisions);
      if (failed(propagation.run(sharded, conflicts)))
        return signalPassFailure();
    }
    numSharded += sharded;
    numConflicts += conflicts;
  }
};
} // namespace
