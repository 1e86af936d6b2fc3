//===- Mutator.cpp - Token-level mutations of MLIR source -----------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "Mutator.h"

#include "llvm/Support/ErrorHandling.h"

#include <random>
#include <regex>
#include <vector>

using namespace mlir::epl::fuzz;

namespace {

struct Span {
  size_t begin, end;
};

std::vector<Span> find(const std::string &text, const std::regex &re,
                       int group = 0) {
  std::vector<Span> spans;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re);
       it != std::sregex_iterator(); ++it) {
    const std::smatch &m = *it;
    size_t begin = m.position(group);
    spans.push_back({begin, begin + m.length(group)});
  }
  return spans;
}

std::vector<Span> lines(const std::string &text) {
  std::vector<Span> spans;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    end = end == std::string::npos ? text.size() : end + 1;
    spans.push_back({begin, end});
    begin = end;
  }
  return spans;
}

class Mutator {
public:
  explicit Mutator(uint32_t seed) : rng(seed) {}

  /// Weighted toward what keeps a model valid but changes what the EPL
  /// passes read (axes, roles, list entries, attributes moved); integer,
  /// type and line mutations mostly make input the verifier rejects.
  bool mutateOnce(std::string &text) {
    using Mutation = bool (Mutator::*)(std::string &);
    static constexpr std::pair<size_t, Mutation> kWeighted[] = {
        {2, &Mutator::integer},        {2, &Mutator::string},
        {1, &Mutator::type},           {2, &Mutator::listEntry},
        {1, &Mutator::attributeEntry}, {2, &Mutator::copyAttribute},
        {1, &Mutator::line},           {1, &Mutator::keyword}};
    size_t total = 0;
    for (auto [weight, mutation] : kWeighted)
      total += weight;
    size_t at = pick(total);
    for (auto [weight, mutation] : kWeighted) {
      if (at < weight)
        return (this->*mutation)(text);
      at -= weight;
    }
    llvm_unreachable("pick(total) is below the weights' sum");
  }

private:
  size_t pick(size_t n) {
    return std::uniform_int_distribution<size_t>(0, n - 1)(rng);
  }
  template <typename T> const T &choose(const std::vector<T> &v) {
    return v[pick(v.size())];
  }

  void replace(std::string &text, Span s, const std::string &with) {
    text.replace(s.begin, s.end - s.begin, with);
  }

  /// A size, index, device count or stride made extreme or off by one.
  bool integer(std::string &text) {
    static const std::regex re(R"((^|[^\w.#%@^])(\d+)(?![\w.]))");
    auto spans = find(text, re, 2);
    if (spans.empty())
      return false;
    Span s = choose(spans);
    static const std::vector<std::string> values = {
        "0",          "1",          "2",          "3",
        "4",          "8",          "-1",         "100000",
        "2147483648", "4294967296", "4294967298", "9223372036854775807"};
    std::string old = text.substr(s.begin, s.end - s.begin);
    std::string with = choose(values);
    if (pick(3) == 0 && old.size() < 10) {
      long long v = std::stoll(old);
      with = std::to_string(pick(2) ? v + 1 : v - 1);
    }
    replace(text, s, with);
    return true;
  }

  /// A mesh axis, role, mode or name swapped for another of the input's.
  bool string(std::string &text) {
    static const std::regex re(R"("[A-Za-z_][\w.]*")");
    auto spans = find(text, re);
    if (spans.size() < 2)
      return false;
    Span to = choose(spans), from = choose(spans);
    replace(text, to, text.substr(from.begin, from.end - from.begin));
    return true;
  }

  /// An element type or a dimension changed.
  bool type(std::string &text) {
    static const std::regex re(R"(\b(f16|bf16|f32|f64|i1|i32|i64|index)\b)");
    static const std::vector<std::string> types = {
        "f16", "bf16", "f32", "f64", "i1", "i32", "i64", "index"};
    static const std::regex dims(R"((?:tensor|memref)<((?:\d+x)+))");
    if (pick(2)) {
      auto spans = find(text, re);
      if (spans.empty())
        return false;
      replace(text, choose(spans), choose(types));
      return true;
    }
    auto spans = find(text, dims, 1);
    if (spans.empty())
      return false;
    Span s = choose(spans);
    std::string shape = text.substr(s.begin, s.end - s.begin);
    static const std::vector<std::string> edits = {"", "1x", "?x", "0x", "3x"};
    replace(text, s, pick(2) ? shape + choose(edits) : choose(edits) + shape);
    return true;
  }

  /// An entry of a [...] list repeated, dropped or swapped.
  bool listEntry(std::string &text) {
    static const std::regex re(R"(\[([^\[\]\n]+)\])");
    auto spans = find(text, re, 1);
    if (spans.empty())
      return false;
    Span s = choose(spans);
    std::vector<std::string> items;
    std::string body = text.substr(s.begin, s.end - s.begin);
    size_t at = 0;
    for (size_t comma; (comma = body.find(',', at)) != std::string::npos;
         at = comma + 1)
      items.push_back(body.substr(at, comma - at));
    items.push_back(body.substr(at));
    size_t i = pick(items.size());
    switch (pick(3)) {
    case 0:
      items.insert(items.begin() + pick(items.size() + 1), items[i]);
      break;
    case 1:
      if (items.size() < 2)
        return false;
      items.erase(items.begin() + i);
      break;
    default:
      std::swap(items[i], items[pick(items.size())]);
    }
    std::string joined;
    for (size_t k = 0; k < items.size(); ++k)
      joined += (k ? "," : "") + items[k];
    replace(text, s, joined);
    return true;
  }

  /// An `epl.*` or other `name = value` entry of an attribute dictionary
  /// dropped.
  bool attributeEntry(std::string &text) {
    static const std::regex re(R"([\w.]+ = [^,{}\n]+(, )?)");
    auto spans = find(text, re);
    if (spans.empty())
      return false;
    replace(text, choose(spans), "");
    return true;
  }

  /// An `epl.*` attribute entry of one op given to another.
  bool copyAttribute(std::string &text) {
    static const std::regex entry(R"(epl\.\w+ = [^,{}\n]+)");
    static const std::regex dict(R"(\{epl\.)");
    auto entries = find(text, entry);
    auto dicts = find(text, dict);
    if (entries.empty() || dicts.empty())
      return false;
    Span from = choose(entries);
    Span to = choose(dicts);
    text.insert(to.begin + 1,
                text.substr(from.begin, from.end - from.begin) + ", ");
    return true;
  }

  /// A whole line dropped, repeated or moved next to another.
  bool line(std::string &text) {
    auto spans = lines(text);
    if (spans.size() < 3)
      return false;
    Span s = choose(spans);
    std::string l = text.substr(s.begin, s.end - s.begin);
    switch (pick(3)) {
    case 0:
      replace(text, s, "");
      break;
    case 1:
      text.insert(s.begin, l);
      break;
    default: {
      replace(text, s, "");
      auto rest = lines(text);
      text.insert(choose(rest).begin, l);
    }
    }
    return true;
  }

  /// An iterator type, role or reduction mode swapped for another.
  bool keyword(std::string &text) {
    static const std::regex re(
        R"(\b(parallel|reduction|sum|mean|max|min|param|input|label|loss|state|data|tensor|stage)\b)");
    static const std::vector<std::string> words = {
        "parallel", "reduction", "sum",  "mean",  "max",  "min",    "param",
        "input",    "label",     "loss", "state", "data", "tensor", "stage"};
    auto spans = find(text, re);
    if (spans.empty())
      return false;
    replace(text, choose(spans), choose(words));
    return true;
  }

  std::mt19937 rng;
};

} // namespace

std::string mlir::epl::fuzz::mutate(const std::string &text, uint32_t seed) {
  Mutator mutator(seed);
  std::string result = text;
  std::mt19937 count(seed ^ 0x9e3779b9u);
  int n = 1 + static_cast<int>(count() % 3);
  for (int tries = 0; n > 0 && tries < 20; ++tries)
    if (mutator.mutateOnce(result))
      --n;
  return result;
}
