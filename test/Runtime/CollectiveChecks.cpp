//===- CollectiveChecks.cpp - Checks of every collective, per rank --------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "CollectiveChecks.h"

#include "epl/Runtime/Backend.h"
#include "epl/Runtime/Runtime.h"

#include <cstdint>
#include <cstring>
#include <sstream>
#include <thread>

using namespace epl::rt;

namespace {
/// A 1-D memref descriptor over a vector, as lowered code passes it.
template <typename T> struct Buffer {
  explicit Buffer(std::vector<T> values) : data(std::move(values)) {
    auto ptr = reinterpret_cast<int64_t>(data.data());
    descriptor = {ptr, ptr, 0, static_cast<int64_t>(data.size()), 1};
    memref = {1, descriptor.data()};
  }
  std::vector<T> data;
  std::vector<int64_t> descriptor;
  EplUnrankedMemRef memref;
  EplUnrankedMemRef *mem() { return &memref; }
  // The descriptor points into `data`: never copy.
  Buffer(const Buffer &) = delete;
};

/// A device group over `shape` spanning `axes`, as the lowering encodes it.
Buffer<int64_t> groupOf(std::vector<int64_t> shape, std::vector<int64_t> axes) {
  std::vector<int64_t> d = {7, static_cast<int64_t>(shape.size())};
  d.insert(d.end(), shape.begin(), shape.end());
  d.push_back(static_cast<int64_t>(axes.size()));
  d.insert(d.end(), axes.begin(), axes.end());
  return Buffer<int64_t>(d);
}

/// Members of this rank's group, computed independently of the runtime:
/// all ranks whose coordinates agree outside `axes`, ordered by their
/// coordinates along `axes` (major to minor).
std::vector<int> membersOf(int rank, const std::vector<int64_t> &shape,
                           const std::vector<int64_t> &axes) {
  auto coords = [&](int r) {
    std::vector<int64_t> c(shape.size());
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      c[d] = r % shape[d];
      r /= static_cast<int>(shape[d]);
    }
    return c;
  };
  int n = 1;
  for (int64_t s : shape)
    n *= static_cast<int>(s);
  std::vector<std::pair<int64_t, int>> members;
  auto mine = coords(rank);
  for (int r = 0; r < n; ++r) {
    auto c = coords(r);
    bool same = true;
    for (size_t d = 0; d < shape.size(); ++d)
      if (std::find(axes.begin(), axes.end(), d) == axes.end() &&
          c[d] != mine[d])
        same = false;
    if (!same)
      continue;
    int64_t key = 0;
    for (int64_t a : axes)
      key = key * shape[a] + c[a];
    members.push_back({key, r});
  }
  std::sort(members.begin(), members.end());
  std::vector<int> result;
  for (auto &m : members)
    result.push_back(m.second);
  return result;
}

/// Deterministic values that differ per rank and element, with enough
/// mantissa bits that a different summation order gives different floats.
template <typename T> T valueOf(int rank, int64_t i, int salt) {
  uint64_t h = (rank + 1) * 0x9E3779B97F4A7C15ull ^
               (i + 1) * 0xBF58476D1CE4E5B9ull ^ salt * 0x94D049BB133111EBull;
  h ^= h >> 31;
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(static_cast<double>(h % 2000003) / 1000.0 - 1000.0) /
           T(3);
  else
    return static_cast<T>(static_cast<int64_t>(h % 20001) - 10000);
}

template <typename T> std::vector<T> valuesOf(int rank, int64_t n, int salt) {
  std::vector<T> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = valueOf<T>(rank, i, salt);
  return v;
}

template <typename T> T combine(T a, T b, EplReduction kind) {
  switch (kind) {
  case EPL_RT_SUM:
  case EPL_RT_MEAN:
    return a + b;
  case EPL_RT_MAX:
    return b > a ? b : a;
  case EPL_RT_MIN:
    return b < a ? b : a;
  }
  return a;
}

template <typename T>
T reduceOver(const std::vector<int> &members, int64_t i, int salt,
             EplReduction kind) {
  T acc = valueOf<T>(members[0], i, salt);
  for (size_t m = 1; m < members.size(); ++m)
    acc = combine(acc, valueOf<T>(members[m], i, salt), kind);
  if (kind == EPL_RT_MEAN)
    acc = acc / static_cast<T>(members.size());
  return acc;
}

struct Checker {
  std::vector<std::string> failures;
  std::string context;
  template <typename T>
  void equal(const std::vector<T> &actual, const std::vector<T> &expected,
             const std::string &what) {
    if (actual.size() != expected.size()) {
      failures.push_back(context + what + ": size differs");
      return;
    }
    for (size_t i = 0; i < actual.size(); ++i)
      if (std::memcmp(&actual[i], &expected[i], sizeof(T)) != 0) {
        std::ostringstream os;
        os.precision(17);
        os << context << what << ": element " << i << " is " << actual[i]
           << ", expected " << expected[i];
        failures.push_back(os.str());
        return;
      }
  }
};

// One dispatch per element type, as the lowering emits one call per type.
#define EPL_DISPATCH(NAME, T, ...)                                             \
  if constexpr (std::is_same_v<T, float>)                                      \
    _mlir_ciface_epl_rt_##NAME##_f32(__VA_ARGS__);                             \
  else if constexpr (std::is_same_v<T, double>)                                \
    _mlir_ciface_epl_rt_##NAME##_f64(__VA_ARGS__);                             \
  else if constexpr (std::is_same_v<T, int32_t>)                               \
    _mlir_ciface_epl_rt_##NAME##_i32(__VA_ARGS__);                             \
  else                                                                         \
    _mlir_ciface_epl_rt_##NAME##_i64(__VA_ARGS__);

template <typename T>
void checkGroup(Checker &check, int rank, const std::vector<int64_t> &shape,
                const std::vector<int64_t> &axes) {
  std::vector<int> members = membersOf(rank, shape, axes);
  int g = static_cast<int>(members.size());
  int index = static_cast<int>(std::find(members.begin(), members.end(), rank) -
                               members.begin());
  auto group = groupOf(shape, axes);

  if (_mlir_ciface_epl_rt_group_index(group.mem()) != index)
    check.failures.push_back(check.context + "group_index");
  _mlir_ciface_epl_rt_barrier(group.mem());

  // One all-reduce of `n` values (salted by `salt`), its sum written into
  // a buffer of its own or over its input (epl-all-reduce-in-place).
  auto allReduce = [&](int64_t n, EplReduction kind, int salt, bool inPlace) {
    Buffer<T> in{valuesOf<T>(rank, n, salt)}, out{std::vector<T>(n)};
    Buffer<T> &sum = inPlace ? in : out;
    EPL_DISPATCH(all_reduce, T, in.mem(), sum.mem(), group.mem(), kind)
    std::vector<T> expected(n);
    for (int64_t i = 0; i < n; ++i)
      expected[i] = reduceOver<T>(members, i, salt, kind);
    check.equal(sum.data, expected,
                std::string("all_reduce ") + reductionName(kind) + " of " +
                    std::to_string(n) + (inPlace ? " in place" : ""));
  };
  // Uneven sizes (not a multiple of the group) and a larger one.
  for (int64_t n : {1, 7, 1001})
    for (EplReduction kind : {EPL_RT_SUM, EPL_RT_MAX, EPL_RT_MIN, EPL_RT_MEAN})
      allReduce(n, kind, 1, /*inPlace=*/false);
  // Over 1 MiB, the threads backend shares the reduction out among the
  // members (whole cache lines each, the last share short): the same sums.
  if constexpr (std::is_same_v<T, float>)
    for (EplReduction kind : {EPL_RT_SUM, EPL_RT_MAX})
      allReduce(270001, kind, 7, /*inPlace=*/false);
  // In place, small (the threads backend takes shares then too) and large.
  for (int64_t n : {7, 270001})
    allReduce(n, EPL_RT_SUM, 8, /*inPlace=*/true);

  // all_gather of 5 per rank.
  {
    Buffer<T> in{valuesOf<T>(rank, 5, 2)}, out{std::vector<T>(5 * g)};
    EPL_DISPATCH(all_gather, T, in.mem(), out.mem(), group.mem())
    std::vector<T> expected;
    for (int m : members)
      for (T v : valuesOf<T>(m, 5, 2))
        expected.push_back(v);
    check.equal(out.data, expected, "all_gather");
  }

  // reduce_scatter of 3 per rank.
  for (EplReduction kind : {EPL_RT_SUM, EPL_RT_MEAN, EPL_RT_MAX}) {
    Buffer<T> in{valuesOf<T>(rank, 3 * g, 3)}, out{std::vector<T>(3)};
    EPL_DISPATCH(reduce_scatter, T, in.mem(), out.mem(), group.mem(), kind)
    std::vector<T> expected(3);
    for (int64_t i = 0; i < 3; ++i)
      expected[i] = reduceOver<T>(members, index * 3 + i, 3, kind);
    check.equal(out.data, expected,
                std::string("reduce_scatter ") + reductionName(kind));
  }

  // all_to_all of 2 per pair.
  {
    Buffer<T> in{valuesOf<T>(rank, 2 * g, 4)}, out{std::vector<T>(2 * g)};
    EPL_DISPATCH(all_to_all, T, in.mem(), out.mem(), group.mem())
    std::vector<T> expected;
    for (int m : members) {
      auto theirs = valuesOf<T>(m, 2 * g, 4);
      expected.push_back(theirs[2 * index]);
      expected.push_back(theirs[2 * index + 1]);
    }
    check.equal(out.data, expected, "all_to_all");
  }

  // broadcast from the last member.
  {
    Buffer<T> in{valuesOf<T>(rank, 9, 5)}, out{std::vector<T>(9)};
    EPL_DISPATCH(broadcast, T, in.mem(), out.mem(), group.mem(),
                 static_cast<int64_t>(g - 1))
    check.equal(out.data, valuesOf<T>(members[g - 1], 9, 5), "broadcast");
  }

  // A ring of sends then receives, twice with different tags, in a timed
  // pipeline action: the rank records the action, the send and the wait.
  if (g > 1) {
    int next = (index + 1) % g, prev = (index + g - 1) % g;
    for (int64_t tag : {0, 3}) {
      Buffer<T> in{valuesOf<T>(rank, 4 + tag, 6)}, out{std::vector<T>(4 + tag)};
      _mlir_ciface_epl_rt_action_begin(EPL_RT_BACKWARD_INPUT, tag, index);
      EPL_DISPATCH(send, T, in.mem(), group.mem(), static_cast<int64_t>(next),
                   tag)
      EPL_DISPATCH(recv, T, out.mem(), group.mem(), static_cast<int64_t>(prev),
                   tag)
      _mlir_ciface_epl_rt_action_end();
      check.equal(out.data, valuesOf<T>(members[prev], 4 + tag, 6),
                  "send/recv tag " + std::to_string(tag));
      const std::vector<Event> &events = currentStats().events;
      int64_t bytes = (4 + tag) * static_cast<int64_t>(sizeof(T));
      const Event *e = events.size() < 3 ? nullptr : &events[events.size() - 3];
      if (!e || e[0].kind != Event::Kind::Action ||
          e[0].phase != EPL_RT_BACKWARD_INPUT || e[0].microBatch != tag ||
          e[0].stage != index || e[0].end < e[2].end ||
          e[1].kind != Event::Kind::Send || e[1].peer != members[next] ||
          e[1].tag != tag || e[1].bytes != bytes ||
          e[2].kind != Event::Kind::RecvWait || e[2].peer != members[prev] ||
          e[2].bytes != bytes || e[2].begin < e[1].end)
        check.failures.push_back(check.context +
                                 "events of an action with a send and a "
                                 "recv, tag " +
                                 std::to_string(tag));
    }
  }
}
#undef EPL_DISPATCH

template <typename T> void checkAllGroups(Checker &check, int rank, int n) {
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{n}, {0}}};
  // 2-D meshes: groups along either axis, both axes, and both reversed.
  if (n == 4)
    cases.insert(cases.end(), {{{2, 2}, {0}}, {{2, 2}, {1}}, {{2, 2}, {1, 0}}});
  if (n == 8)
    cases.insert(cases.end(), {{{2, 4}, {0}},
                               {{2, 4}, {1}},
                               {{2, 4}, {0, 1}},
                               {{2, 4}, {1, 0}},
                               {{2, 2, 2}, {0, 2}}});
  for (auto &[shape, axes] : cases) {
    std::ostringstream os;
    os << "rank " << rank << ", mesh [";
    for (size_t i = 0; i < shape.size(); ++i)
      os << (i ? "x" : "") << shape[i];
    os << "] axes [";
    for (size_t i = 0; i < axes.size(); ++i)
      os << (i ? "," : "") << axes[i];
    os << "], " << typeid(T).name() << ": ";
    check.context = os.str();
    checkGroup<T>(check, rank, shape, axes);
  }
}
} // namespace

/// f16 (communication.fp16): moved in half precision, reduced in f32. Small
/// integers are exact in both, so the result is known exactly.
void checkHalf(Checker &check, int rank, int n) {
  auto group = groupOf({n}, {0});
  auto half = [](int v) -> uint16_t { // exact for |v| < 2048
    if (v == 0)
      return 0;
    uint16_t sign = v < 0 ? 0x8000 : 0;
    unsigned m = static_cast<unsigned>(v < 0 ? -v : v);
    int e = 0;
    while ((m >> e) > 1)
      ++e;
    unsigned mantissa = (m << (10 - e)) & 0x3ff;
    return static_cast<uint16_t>(sign | ((e + 15) << 10) | mantissa);
  };
  std::vector<uint16_t> in, expected;
  for (int i = 0; i < 9; ++i) {
    in.push_back(half(rank * 3 - i));
    int sum = 0;
    for (int r = 0; r < n; ++r)
      sum += r * 3 - i;
    expected.push_back(half(sum));
  }
  Buffer<uint16_t> a{in}, out{std::vector<uint16_t>(9)};
  _mlir_ciface_epl_rt_all_reduce_f16(a.mem(), out.mem(), group.mem(),
                                     EPL_RT_SUM);
  check.context = "rank " + std::to_string(rank) + ", f16: ";
  check.equal(out.data, expected, "all_reduce sum");
}

std::vector<std::string> epl::rt::test::runCollectiveChecks(int rank,
                                                            int worldSize) {
  Checker check;
  checkHalf(check, rank, worldSize);
  checkAllGroups<float>(check, rank, worldSize);
  checkAllGroups<double>(check, rank, worldSize);
  checkAllGroups<int32_t>(check, rank, worldSize);
  checkAllGroups<int64_t>(check, rank, worldSize);
  return check.failures;
}

void epl::rt::test::runFailureScenario(const std::string &name, int rank,
                                       int worldSize) {
  auto group = groupOf({worldSize}, {0});
  if (name == "mismatch") {
    int64_t n = rank == 1 ? 8 : 4;
    Buffer<float> in{std::vector<float>(n)}, out{std::vector<float>(n)};
    _mlir_ciface_epl_rt_all_reduce_f32(in.mem(), out.mem(), group.mem(),
                                       EPL_RT_SUM);
  } else if (name == "early-exit") {
    if (rank == worldSize - 1)
      return;
    Buffer<float> in{std::vector<float>(4)}, out{std::vector<float>(4)};
    _mlir_ciface_epl_rt_all_reduce_f32(in.mem(), out.mem(), group.mem(),
                                       EPL_RT_SUM);
  } else if (name == "timeout") {
    if (rank == 1) {
      Buffer<float> out{std::vector<float>(4)};
      _mlir_ciface_epl_rt_recv_f32(out.mem(), group.mem(), 0, 0);
    } else {
      // Rank 0 stays alive past the timeout without sending; the others
      // too, so that rank 1's timeout is the first (theirs, at the end of
      // the program, would race it).
      std::this_thread::sleep_for(std::chrono::seconds(5));
    }
  } else {
    fatalError("unknown failure scenario '" + name + "'");
  }
}
