// The built-in JMESPath functions (see functions.hpp). Number results keep jmespath.py's
// integer/float distinction: abs/sum/max keep ints, avg is always a float, floor/ceil give ints.
#include "functions.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "budget.hpp"
#include "json_util.hpp"

namespace batchai::query::detail {
namespace {

using Args = std::vector<Arg>;

Value number_result(double d) {
  if (d >= -9.2e18 && d <= 9.2e18) return Value::own(Json(static_cast<std::int64_t>(d)));
  return Value::own(Json(d));
}

// A result that is `part` of argument `arg` (the argument itself or, for arrays, an element
// reached through at()): borrowed when the argument borrows, copied (or moved, when it is the
// whole argument) when the argument is a temporary.
Value pass_through(Arg& arg, const Json& part) {
  if (!arg.value.owned()) return Value::borrow(part);
  if (&part == &arg.value.get()) return std::move(arg.value);
  charge(part);
  return Value::own(part);
}

// Builds an array result from elements of argument `arg` (reached through at()): a reference
// list when the argument borrows, copies when it is a temporary.
Value array_of(const Arg& arg, const std::vector<const Json*>& items) {
  if (!arg.value.owned()) return Value::refs(items);
  Json out = Json::array();
  auto& array = out.get_ref<Json::array_t&>();
  array.reserve(items.size());
  for (const Json* item : items) {
    charge(*item);
    array.push_back(*item);
  }
  return Value::own(std::move(out));
}

std::vector<const Json*> elements(const Value& array) {
  std::vector<const Json*> items(array.size());
  for (std::size_t i = 0; i < items.size(); ++i) items[i] = &array.at(i);
  return items;
}

[[noreturn]] void type_error(const Node& call, const std::string& detail) {
  throw QueryError(ErrorKind::kInvalidType, call.position,
                   "Invalid JMESPath argument type at position " + std::to_string(call.position) + ": function " +
                       call.name + "() " + detail);
}

// Evaluates the &expression of `expref` on every element and checks the keys are all numbers
// or all strings (the type of the first key decides), as sort_by/max_by/min_by require.
std::vector<Value> sort_keys(Evaluator& evaluator, const Node& call, const Node& expref, const Value& array) {
  std::vector<Value> keys;
  keys.reserve(array.size());
  const char* required = nullptr;
  for (std::size_t i = 0, n = array.size(); i < n; ++i) {
    Value key = evaluator.eval(expref, Value::borrow(array.at(i)));
    const char* type = type_name(key);
    if (required == nullptr) required = type;
    if ((key.is_refs() || (!key.get().is_number() && !key.get().is_string())) || std::string_view(type) != required) {
      type_error(call, std::string("needs the &expression to give only numbers or only strings, but element ") +
                           std::to_string(keys.size()) + " gives " + type +
                           (std::string_view(required) != type ? std::string(" after ") + required : std::string()));
    }
    keys.push_back(std::move(key));
  }
  return keys;
}

// Sort keys flattened for fast comparison: int64 when every key is an integer that fits,
// doubles for other numbers, string pointers for strings.
class KeyTable {
 public:
  explicit KeyTable(const std::vector<Value>& keys) {
    const std::size_t n = keys.size();
    if (n == 0) return;
    if (keys[0].get().is_string()) {
      kind_ = Kind::kString;
      strings_.resize(n);
      for (std::size_t i = 0; i < n; ++i) strings_[i] = &keys[i].get().get_ref<const std::string&>();
      return;
    }
    const auto fits = [](const Json& v) {
      return v.is_number_integer() &&
             (!v.is_number_unsigned() ||
              v.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
    };
    kind_ = std::all_of(keys.begin(), keys.end(), [&](const Value& k) { return fits(k.get()); }) ? Kind::kInt
                                                                                                : Kind::kDouble;
    numbers_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (kind_ == Kind::kInt) {
        numbers_[i].i = keys[i].get().get<std::int64_t>();
      } else {
        numbers_[i].d = keys[i].get().get<double>();
      }
    }
  }
  bool less(std::size_t a, std::size_t b) const {
    switch (kind_) {
      case Kind::kString: return *strings_[a] < *strings_[b];
      case Kind::kInt: return numbers_[a].i < numbers_[b].i;
      case Kind::kDouble: break;
    }
    return numbers_[a].d < numbers_[b].d;
  }

 private:
  enum class Kind { kString, kInt, kDouble };
  union Number {
    std::int64_t i;
    double d;
  };
  Kind kind_ = Kind::kInt;
  std::vector<Number> numbers_;
  std::vector<const std::string*> strings_;
};

int compare_keys(const Json& a, const Json& b) {
  if (a.is_number()) return compare_numbers(a, b);
  return a.get_ref<const std::string&>().compare(b.get_ref<const std::string&>());
}

Value fn_abs(Evaluator&, const Node&, Args& args) {
  const Json& v = args[0].value.get();
  if (v.is_number_unsigned()) return pass_through(args[0], v);
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i == std::numeric_limits<std::int64_t>::min()) return Value::own(Json(static_cast<std::uint64_t>(i)));
    return Value::own(Json(i < 0 ? -i : i));
  }
  return Value::own(Json(std::fabs(v.get<double>())));
}

Value fn_avg(Evaluator&, const Node&, Args& args) {
  const Value& array = args[0].value;
  if (array.size() == 0) return {};
  double sum = 0;
  for (std::size_t i = 0, n = array.size(); i < n; ++i) sum += array.at(i).get<double>();
  return Value::own(Json(sum / static_cast<double>(array.size())));
}

Value fn_ceil(Evaluator&, const Node&, Args& args) {
  const Json& v = args[0].value.get();
  if (v.is_number_integer()) return pass_through(args[0], v);
  return number_result(std::ceil(v.get<double>()));
}

Value fn_floor(Evaluator&, const Node&, Args& args) {
  const Json& v = args[0].value.get();
  if (v.is_number_integer()) return pass_through(args[0], v);
  return number_result(std::floor(v.get<double>()));
}

Value fn_contains(Evaluator&, const Node&, Args& args) {
  const Value& subject = args[0].value;
  const Json& search = args[1].value.get();
  if (!subject.is_array()) {
    if (!search.is_string()) return Value::own(Json(false));
    return Value::own(Json(subject.get().get_ref<const std::string&>().find(search.get_ref<const std::string&>()) !=
                           std::string::npos));
  }
  for (std::size_t i = 0, n = subject.size(); i < n; ++i) {
    if (json_equal(subject.at(i), search)) return Value::own(Json(true));
  }
  return Value::own(Json(false));
}

Value fn_ends_with(Evaluator&, const Node&, Args& args) {
  const auto& s = args[0].value.get().get_ref<const std::string&>();
  const auto& suffix = args[1].value.get().get_ref<const std::string&>();
  return Value::own(Json(s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0));
}

Value fn_starts_with(Evaluator&, const Node&, Args& args) {
  const auto& s = args[0].value.get().get_ref<const std::string&>();
  const auto& prefix = args[1].value.get().get_ref<const std::string&>();
  return Value::own(Json(s.compare(0, prefix.size(), prefix) == 0));
}

Value fn_join(Evaluator&, const Node&, Args& args) {
  const auto& glue = args[0].value.get().get_ref<const std::string&>();
  std::string out;
  bool first = true;
  const Value& parts = args[1].value;
  for (std::size_t i = 0, n = parts.size(); i < n; ++i) {
    const auto& part = parts.at(i).get_ref<const std::string&>();
    charge_bytes((first ? 0 : glue.size()) + part.size());
    if (!first) out += glue;
    first = false;
    out += part;
  }
  return Value::own(Json(std::move(out)));
}

Value fn_keys(Evaluator&, const Node&, Args& args) {
  Json out = Json::array();
  for (const auto& [key, value] : args[0].value.get().items()) {
    charge_bytes(sizeof(Json) + sizeof(std::string) + key.size());
    out.push_back(key);
  }
  return Value::own(std::move(out));
}

Value fn_values(Evaluator&, const Node&, Args& args) {
  std::vector<const Json*> items;
  for (const auto& value : args[0].value.get()) items.push_back(&value);
  return array_of(args[0], items);
}

Value fn_length(Evaluator&, const Node&, Args& args) {
  const Value& v = args[0].value;
  const bool string = !v.is_refs() && v.get().is_string();
  const std::size_t n = string ? utf8_length(v.get().get_ref<const std::string&>()) : v.size();
  return Value::own(Json(static_cast<std::int64_t>(n)));
}

Value fn_map(Evaluator& evaluator, const Node&, Args& args) {
  const Value& array = args[1].value;
  ResultList out(array.size(), !array.owned());
  for (std::size_t i = 0, n = array.size(); i < n; ++i) {
    out.add(evaluator.eval(*args[0].expref, Value::borrow(array.at(i))));
  }
  return std::move(out).finish();
}

Value extreme(Args& args, int sign) {
  const Value& array = args[0].value;
  if (array.size() == 0) return {};
  const Json* best = &array.at(0);
  for (std::size_t i = 1, n = array.size(); i < n; ++i) {
    if (compare_keys(array.at(i), *best) * sign > 0) best = &array.at(i);
  }
  return pass_through(args[0], *best);
}

Value fn_max(Evaluator&, const Node&, Args& args) { return extreme(args, 1); }
Value fn_min(Evaluator&, const Node&, Args& args) { return extreme(args, -1); }

Value extreme_by(Evaluator& evaluator, const Node& call, Args& args, int sign) {
  const Value& array = args[0].value;
  if (array.size() == 0) return {};
  const KeyTable keys(sort_keys(evaluator, call, *args[1].expref, array));
  std::size_t best = 0;
  for (std::size_t i = 1, n = array.size(); i < n; ++i) {
    if (sign > 0 ? keys.less(best, i) : keys.less(i, best)) best = i;
  }
  return pass_through(args[0], array.at(best));
}

Value fn_max_by(Evaluator& e, const Node& call, Args& args) { return extreme_by(e, call, args, 1); }
Value fn_min_by(Evaluator& e, const Node& call, Args& args) { return extreme_by(e, call, args, -1); }

Value fn_merge(Evaluator&, const Node&, Args& args) {
  if (args.size() == 1) return std::move(args[0].value);
  Json out = Json::object();
  for (auto& arg : args) {
    for (const auto& [key, value] : arg.value.get().items()) {
      charge(value);
      out[key] = value;
    }
  }
  return Value::own(std::move(out));
}

Value fn_not_null(Evaluator&, const Node&, Args& args) {
  for (auto& arg : args) {
    if (!arg.value.is_null()) return std::move(arg.value);
  }
  return {};
}

Value fn_reverse(Evaluator&, const Node&, Args& args) {
  const Value& v = args[0].value;
  if (!v.is_array()) {
    charge(v.get());
    return Value::own(Json(utf8_reverse(v.get().get_ref<const std::string&>())));
  }
  std::vector<const Json*> items = elements(v);
  std::reverse(items.begin(), items.end());
  return array_of(args[0], items);
}

Value fn_sort(Evaluator&, const Node&, Args& args) {
  std::vector<const Json*> items = elements(args[0].value);
  std::stable_sort(items.begin(), items.end(), [](const Json* a, const Json* b) { return compare_keys(*a, *b) < 0; });
  return array_of(args[0], items);
}

Value fn_sort_by(Evaluator& evaluator, const Node& call, Args& args) {
  const Value& array = args[0].value;
  if (array.size() == 0) return std::move(args[0].value);
  const KeyTable keys(sort_keys(evaluator, call, *args[1].expref, array));
  std::vector<std::size_t> order(array.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return keys.less(a, b); });
  std::vector<const Json*> items(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) items[i] = &array.at(order[i]);
  return array_of(args[0], items);
}

Value fn_sum(Evaluator&, const Node&, Args& args) {
  std::int64_t isum = 0;
  double dsum = 0;
  bool integral = true;
  const Value& array = args[0].value;
  for (std::size_t i = 0, n = array.size(); i < n; ++i) {
    const Json& v = array.at(i);
    const bool fits = v.is_number_integer() &&
                      (!v.is_number_unsigned() ||
                       v.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
    std::int64_t next = 0;
    if (integral && fits && !__builtin_add_overflow(isum, v.get<std::int64_t>(), &next)) {
      isum = next;
      continue;
    }
    if (integral) dsum = static_cast<double>(isum);
    integral = false;
    dsum += v.get<double>();
  }
  return integral ? Value::own(Json(isum)) : Value::own(Json(dsum));
}

Value fn_to_array(Evaluator&, const Node&, Args& args) {
  if (args[0].value.is_array()) return std::move(args[0].value);
  Json out = Json::array();
  out.push_back(std::move(args[0].value).take());
  return Value::own(std::move(out));
}

Value fn_to_number(Evaluator&, const Node&, Args& args) {
  const Json& v = args[0].value.get();
  if (v.is_number()) return std::move(args[0].value);
  if (!v.is_string()) return {};
  auto parsed = parse_number_like_python(v.get_ref<const std::string&>());
  return parsed ? Value::own(std::move(*parsed)) : Value();
}

Value fn_to_string(Evaluator&, const Node&, Args& args) {
  if (!args[0].value.is_refs() && args[0].value.get().is_string()) return std::move(args[0].value);
  charge(args[0].value.get());  // before the text exists: it is about the size of the value
  std::string text = python_dumps(args[0].value.get());
  return Value::own(Json(std::move(text)));
}

Value fn_type(Evaluator&, const Node&, Args& args) { return Value::own(Json(type_name(args[0].value))); }

const std::vector<FunctionSpec>& table() {
  constexpr unsigned kArrayOrString = kTypeArray | kTypeString;
  constexpr unsigned kNumbersOrStrings = kTypeArrayNumber | kTypeArrayString;
  static const std::vector<FunctionSpec> kTable = {
      {"abs", {kTypeNumber}, false, fn_abs},
      {"avg", {kTypeArrayNumber}, false, fn_avg},
      {"ceil", {kTypeNumber}, false, fn_ceil},
      {"contains", {kArrayOrString, kTypeAny}, false, fn_contains},
      {"ends_with", {kTypeString, kTypeString}, false, fn_ends_with},
      {"floor", {kTypeNumber}, false, fn_floor},
      {"join", {kTypeString, kTypeArrayString}, false, fn_join},
      {"keys", {kTypeObject}, false, fn_keys},
      {"length", {kTypeString | kTypeArray | kTypeObject}, false, fn_length},
      {"map", {kTypeExpref, kTypeArray}, false, fn_map},
      {"max", {kNumbersOrStrings}, false, fn_max},
      {"max_by", {kTypeArray, kTypeExpref}, false, fn_max_by},
      {"merge", {kTypeObject}, true, fn_merge},
      {"min", {kNumbersOrStrings}, false, fn_min},
      {"min_by", {kTypeArray, kTypeExpref}, false, fn_min_by},
      {"not_null", {kTypeAny}, true, fn_not_null},
      {"reverse", {kArrayOrString}, false, fn_reverse},
      {"sort", {kNumbersOrStrings}, false, fn_sort},
      {"sort_by", {kTypeArray, kTypeExpref}, false, fn_sort_by},
      {"starts_with", {kTypeString, kTypeString}, false, fn_starts_with},
      {"sum", {kTypeArrayNumber}, false, fn_sum},
      {"to_array", {kTypeAny}, false, fn_to_array},
      {"to_number", {kTypeAny}, false, fn_to_number},
      {"to_string", {kTypeAny}, false, fn_to_string},
      {"type", {kTypeAny}, false, fn_type},
      {"values", {kTypeObject}, false, fn_values},
  };
  return kTable;
}

}  // namespace

const FunctionSpec* find_function(std::string_view name) {
  for (const auto& spec : table()) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

}  // namespace batchai::query::detail
