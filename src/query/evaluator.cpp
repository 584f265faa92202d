// JMESPath evaluation over the syntax tree (see evaluator.hpp). Semantics follow the
// specification and jmespath.py: projections drop null results, multi-selects on null give null,
// ordering comparisons apply to numbers only and give null otherwise.
#include "evaluator.hpp"

#include <algorithm>

#include "functions.hpp"
#include "json_util.hpp"

namespace batchai::query::detail {
namespace {

Json::array_t& new_array(Json& out, std::size_t reserve) {
  out = Json::array();
  auto& array = out.get_ref<Json::array_t&>();
  array.reserve(reserve);
  return array;
}

// Appends the projection result `r` of element `element` of `base`: moved out of `base` when
// base is a temporary and `r` is the element itself, copied otherwise.
void append_result(Json::array_t& out, Value&& r, Value& base, const Json& element) {
  if (r.get().is_null()) return;
  if (!r.owned() && base.owned() && &r.get() == &element) {
    out.push_back(std::move(const_cast<Json&>(element)));  // NOLINT: element lives in base's owned value
    return;
  }
  out.push_back(std::move(r).take());
}

}  // namespace

const Json& null_json() {
  static const Json kNull;
  return kNull;
}

Value Evaluator::eval_on(const Node& node, Value base) {
  if (!base.owned()) return eval(node, base.get());
  Value result = eval(node, base.get());
  if (result.owned()) return result;
  if (&result.get() == &base.get()) return base;
  return Value::own(result.get());  // copy out of the temporary before it dies
}

Value Evaluator::eval(const Node& node, const Json& current) {
  switch (node.kind) {
    case NodeKind::kField: {
      if (!current.is_object()) return {};
      const auto it = current.find(node.name);
      return it == current.end() ? Value() : Value::borrow(*it);
    }
    case NodeKind::kSubexpression:
    case NodeKind::kIndexExpression: {
      Value value = eval(*node.children[0], current);
      for (std::size_t i = 1; i < node.children.size(); ++i) value = eval_on(*node.children[i], std::move(value));
      return value;
    }
    case NodeKind::kIndex: {
      if (!current.is_array()) return {};
      const auto size = static_cast<std::int64_t>(current.size());
      const std::int64_t i = node.index < 0 ? node.index + size : node.index;
      if (i < 0 || i >= size) return {};
      return Value::borrow(current[static_cast<std::size_t>(i)]);
    }
    case NodeKind::kSlice: return slice(node, current);
    case NodeKind::kProjection: return projection(node, current);
    case NodeKind::kValueProjection: return value_projection(node, current);
    case NodeKind::kFilterProjection: return filter_projection(node, current);
    case NodeKind::kFlatten: return flatten(node, current);
    case NodeKind::kIdentity: return Value::borrow(current);
    case NodeKind::kLiteral: return Value::borrow(node.literal);
    case NodeKind::kComparator: return comparator(node, current);
    case NodeKind::kNot: return Value::own(Json(!is_truthy(eval(*node.children[0], current).get())));
    case NodeKind::kAnd: {
      Value left = eval(*node.children[0], current);
      if (!is_truthy(left.get())) return left;
      return eval(*node.children[1], current);
    }
    case NodeKind::kOr: {
      Value left = eval(*node.children[0], current);
      if (is_truthy(left.get())) return left;
      return eval(*node.children[1], current);
    }
    case NodeKind::kPipe: return eval_on(*node.children[1], eval(*node.children[0], current));
    case NodeKind::kMultiSelectList: {
      if (current.is_null()) return {};
      Json out;
      auto& array = new_array(out, node.children.size());
      for (const auto& child : node.children) array.push_back(eval(*child, current).take());
      return Value::own(std::move(out));
    }
    case NodeKind::kMultiSelectHash: {
      if (current.is_null()) return {};
      Json out = Json::object();
      for (std::size_t i = 0; i < node.children.size(); ++i) {
        out[node.keys[i]] = eval(*node.children[i], current).take();
      }
      return Value::own(std::move(out));
    }
    case NodeKind::kFunction: return call(node, current);
    case NodeKind::kExpref: return {};  // only meaningful as a function argument
  }
  return {};
}

Value Evaluator::projection(const Node& node, const Json& current) {
  Value base = eval(*node.children[0], current);
  if (!base.get().is_array()) return {};
  const Node& right = *node.children[1];
  Json out;
  auto& array = new_array(out, base.get().size());
  for (const auto& element : base.get()) append_result(array, eval(right, element), base, element);
  return Value::own(std::move(out));
}

Value Evaluator::value_projection(const Node& node, const Json& current) {
  Value base = eval(*node.children[0], current);
  if (!base.get().is_object()) return {};
  const Node& right = *node.children[1];
  Json out;
  auto& array = new_array(out, base.get().size());
  for (const auto& element : base.get()) append_result(array, eval(right, element), base, element);
  return Value::own(std::move(out));
}

Value Evaluator::filter_projection(const Node& node, const Json& current) {
  Value base = eval(*node.children[0], current);
  if (!base.get().is_array()) return {};
  const Node& right = *node.children[1];
  const Node& condition = *node.children[2];
  Json out;
  auto& array = new_array(out, 0);
  for (const auto& element : base.get()) {
    if (!is_truthy(eval(condition, element).get())) continue;
    append_result(array, eval(right, element), base, element);
  }
  return Value::own(std::move(out));
}

Value Evaluator::flatten(const Node& node, const Json& current) {
  Value base = eval(*node.children[0], current);
  if (!base.get().is_array()) return {};
  Json out;
  auto& array = new_array(out, base.get().size());
  if (base.owned()) {
    for (auto& element : base.mutable_owned()) {
      if (element.is_array()) {
        for (auto& inner : element) array.push_back(std::move(inner));
      } else {
        array.push_back(std::move(element));
      }
    }
  } else {
    for (const auto& element : base.get()) {
      if (element.is_array()) {
        array.insert(array.end(), element.begin(), element.end());
      } else {
        array.push_back(element);
      }
    }
  }
  return Value::own(std::move(out));
}

// Python's slice semantics (negative indices count from the end, bounds are clamped).
Value Evaluator::slice(const Node& node, const Json& current) {
  if (!current.is_array()) return {};
  const auto size = static_cast<std::int64_t>(current.size());
  const std::int64_t step = node.slice[2].value_or(1);
  const std::int64_t lower = step < 0 ? -1 : 0;
  const std::int64_t upper = step < 0 ? size - 1 : size;
  auto bound = [&](const std::optional<std::int64_t>& given, std::int64_t fallback) {
    if (!given) return fallback;
    std::int64_t v = *given;
    if (v < 0) {
      v = v < -size ? lower : std::max(v + size, lower);
    } else {
      v = std::min(v, upper);
    }
    return v;
  };
  const std::int64_t start = bound(node.slice[0], step < 0 ? upper : lower);
  const std::int64_t stop = bound(node.slice[1], step < 0 ? lower : upper);
  Json out;
  auto& array = new_array(out, 0);
  if (step > 0) {
    for (std::int64_t i = start; i < stop; i = (stop - i > step) ? i + step : stop) {
      array.push_back(current[static_cast<std::size_t>(i)]);
    }
  } else {
    for (std::int64_t i = start; i > stop; i = (i - stop > -step) ? i + step : stop) {
      array.push_back(current[static_cast<std::size_t>(i)]);
    }
  }
  return Value::own(std::move(out));
}

Value Evaluator::comparator(const Node& node, const Json& current) {
  const Value left = eval(*node.children[0], current);
  const Value right = eval(*node.children[1], current);
  const Json& a = left.get();
  const Json& b = right.get();
  switch (node.op) {
    case Comparator::kEq: return Value::own(Json(json_equal(a, b)));
    case Comparator::kNe: return Value::own(Json(!json_equal(a, b)));
    default: break;
  }
  if (!a.is_number() || !b.is_number()) return {};
  const int c = compare_numbers(a, b);
  switch (node.op) {
    case Comparator::kLt: return Value::own(Json(c < 0));
    case Comparator::kLte: return Value::own(Json(c <= 0));
    case Comparator::kGt: return Value::own(Json(c > 0));
    default: return Value::own(Json(c >= 0));
  }
}

Value Evaluator::call(const Node& node, const Json& current) {
  // Unknown functions are reported by the parser; this guards trees built some other way.
  if (node.function == nullptr) {
    throw QueryError(ErrorKind::kUnknownFunction, node.position, "Unknown JMESPath function " + node.name + "()");
  }
  std::vector<Arg> args;
  args.reserve(node.children.size());
  for (const auto& child : node.children) {
    Arg arg;
    if (child->kind == NodeKind::kExpref) {
      arg.expref = child->children[0].get();
    } else {
      arg.value = eval(*child, current);
    }
    args.push_back(std::move(arg));
  }
  check_types(*node.function, node, args);
  return node.function->impl(*this, node, args);
}

}  // namespace batchai::query::detail
