// JMESPath evaluation over the syntax tree (see evaluator.hpp). Semantics follow the
// specification and jmespath.py: projections drop null results, multi-selects on null give null,
// ordering comparisons apply to numbers only and give null otherwise.
#include "evaluator.hpp"

#include <algorithm>
#include <cstring>

#include "budget.hpp"
#include "function_checks.hpp"
#include "functions.hpp"
#include "json_util.hpp"

namespace batchai::query::detail {

const Json kNullJson;

namespace {

// Linear key search like ordered_map::find, but checking length and first byte before memcmp.
const Json* find_key(const Json& object, const std::string& name) {
  const std::size_t size = name.size();
  for (const auto& [key, value] : object.get_ref<const Json::object_t&>()) {
    if (key.size() == size && (size == 0 || (key[0] == name[0] && std::memcmp(key.data(), name.data(), size) == 0))) {
      return &value;
    }
  }
  return nullptr;
}

}  // namespace

Value Value::view() const {
  if (kind_ == Kind::kRefs) {
    Value v;
    v.kind_ = Kind::kRefs;
    v.refs_ = refs_;
    return v;
  }
  return borrow(get());
}

const Json& Value::get() const {
  switch (kind_) {
    case Kind::kBorrowed: return *ref_;
    case Kind::kOwned: return owned_;
    case Kind::kRefs: break;
  }
  if (refs_->cache == nullptr) {
    auto json = std::make_unique<Json>(Json::array());
    auto& array = json->get_ref<Json::array_t&>();
    array.reserve(refs_->items.size());
    for (const Json* item : refs_->items) {
      charge(*item);
      array.push_back(*item);
    }
    refs_->cache = std::move(json);
  }
  return *refs_->cache;
}

Json Value::take() && {
  switch (kind_) {
    case Kind::kBorrowed:
      charge(*ref_);
      return *ref_;
    case Kind::kOwned: return std::move(owned_);
    case Kind::kRefs: break;
  }
  if (refs_->cache != nullptr) {
    charge(*refs_->cache);
    return *refs_->cache;
  }
  Json json = Json::array();
  auto& array = json.get_ref<Json::array_t&>();
  array.reserve(refs_->items.size());
  for (const Json* item : refs_->items) {
    charge(*item);
    array.push_back(*item);
  }
  return json;
}

bool is_truthy(const Value& value) { return value.is_refs() ? value.size() > 0 : is_truthy(value.get()); }

const char* type_name(const Value& value) { return value.is_refs() ? "array" : type_name(value.get()); }

ResultList::ResultList(std::size_t reserve, bool borrow_ok) : as_refs_(borrow_ok) {
  if (as_refs_) {
    refs_.reserve(reserve);
  } else {
    json_ = Json::array();
    json_.get_ref<Json::array_t&>().reserve(reserve);
  }
}

void ResultList::to_json() {
  json_ = Json::array();
  auto& array = json_.get_ref<Json::array_t&>();
  array.reserve(refs_.capacity());
  for (const Json* item : refs_) {
    charge(*item);
    array.push_back(*item);
  }
  refs_ = {};
  as_refs_ = false;
}

void ResultList::add(Value&& result) {
  if (as_refs_) {
    if (!result.owned() && !result.is_refs()) {
      refs_.push_back(&result.get());
      return;
    }
    to_json();
  }
  json_.get_ref<Json::array_t&>().push_back(std::move(result).take());
}

void ResultList::add_json(Json&& json) {
  if (as_refs_) to_json();
  json_.get_ref<Json::array_t&>().push_back(std::move(json));
}

Value ResultList::finish() && { return as_refs_ ? Value::refs(std::move(refs_)) : Value::own(std::move(json_)); }

Value Evaluator::eval_on(const Node& node, Value base) {
  if (!base.has_storage()) {
    Value result = eval(node, base);
    if (!base.has_storage()) return result;  // evaluation may have materialised base
    if (result.owned() || result.is_refs()) return result;  // reference lists never point into a cache
    charge(result.get());
    return Value::own(result.get());
  }
  Value result = eval(node, base);
  if (result.owned()) return result;
  if (result.is_refs()) {
    if (!base.owned()) return result;  // its items point into base's referents, never into a cache
    return Value::own(std::move(result).take());  // may point into base's JSON
  }
  if (base.owned() && &result.get() == &base.get()) return base;
  charge(result.get());
  return Value::own(result.get());  // copy out of the temporary before it dies
}

Value Evaluator::eval(const Node& node, const Value& current) {
  switch (node.kind) {
    case NodeKind::kField: {
      if (current.is_refs()) return {};
      const Json& json = current.get();
      if (!json.is_object()) return {};
      const Json* found = find_key(json, node.name);
      return found == nullptr ? Value() : Value::borrow(*found);
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
      return Value::borrow(current.at(static_cast<std::size_t>(i)));
    }
    case NodeKind::kSlice: return slice(node, current);
    case NodeKind::kProjection:
    case NodeKind::kFlatten: return projection(node, current);
    case NodeKind::kValueProjection: return value_projection(node, current);
    case NodeKind::kFilterProjection: return filter_projection(node, current);
    case NodeKind::kIdentity: return current.view();
    case NodeKind::kLiteral: return Value::borrow(node.literal);
    case NodeKind::kComparator: return comparator(node, current);
    case NodeKind::kNot: return Value::own(Json(!is_truthy(eval(*node.children[0], current))));
    case NodeKind::kAnd: {
      Value left = eval(*node.children[0], current);
      if (!is_truthy(left)) return left;
      return eval(*node.children[1], current);
    }
    case NodeKind::kOr: {
      Value left = eval(*node.children[0], current);
      if (is_truthy(left)) return left;
      return eval(*node.children[1], current);
    }
    case NodeKind::kPipe: return eval_on(*node.children[1], eval(*node.children[0], current));
    case NodeKind::kMultiSelectList: {
      if (current.is_null()) return {};
      ResultList out(node.children.size(), true);
      for (const auto& child : node.children) out.add(eval(*child, current));
      return std::move(out).finish();
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

// List projection `left[*].right`; a flatten `left[].right` when left is a kFlatten node (the
// parser only puts flattens there). A bare kFlatten node projects the identity.
Value Evaluator::projection(const Node& node, const Value& current) {
  const bool bare_flatten = node.kind == NodeKind::kFlatten;
  const Node& left = bare_flatten ? node : *node.children[0];
  const Node* right = bare_flatten ? nullptr : node.children[1].get();
  const bool flatten = left.kind == NodeKind::kFlatten;
  Value base = eval(flatten ? *left.children[0] : left, current);
  if (!base.is_array()) return {};
  const bool movable = base.owned();
  ResultList out(base.size(), !movable);
  auto apply = [&](const Json& element) {
    if (right == nullptr || right->kind == NodeKind::kIdentity) {
      if (element.is_null()) return;
      if (movable) {
        out.add_json(std::move(const_cast<Json&>(element)));  // element belongs to base, a temporary
      } else {
        out.add(Value::borrow(element));
      }
      return;
    }
    Value result = eval(*right, Value::borrow(element));
    if (result.is_null()) return;
    if (movable && !result.owned() && !result.is_refs() && &result.get() == &element) {
      out.add_json(std::move(const_cast<Json&>(element)));
      return;
    }
    out.add(std::move(result));
  };
  for (std::size_t i = 0, n = base.size(); i < n; ++i) {
    const Json& element = base.at(i);
    if (flatten && element.is_array()) {
      for (const auto& inner : element) apply(inner);
    } else {
      apply(element);
    }
  }
  return std::move(out).finish();
}

Value Evaluator::value_projection(const Node& node, const Value& current) {
  Value base = eval(*node.children[0], current);
  if (base.is_refs() || !base.get().is_object()) return {};
  const Node& right = *node.children[1];
  ResultList out(base.get().size(), !base.owned());
  for (const auto& element : base.get()) {
    Value result = eval(right, Value::borrow(element));
    if (!result.is_null()) out.add(std::move(result));
  }
  return std::move(out).finish();
}

Value Evaluator::filter_projection(const Node& node, const Value& current) {
  Value base = eval(*node.children[0], current);
  if (!base.is_array()) return {};
  const Node& right = *node.children[1];
  const Node& condition = *node.children[2];
  ResultList out(0, !base.owned());
  for (std::size_t i = 0, n = base.size(); i < n; ++i) {
    const Value element = Value::borrow(base.at(i));
    if (!is_truthy(eval(condition, element))) continue;
    Value result = right.kind == NodeKind::kIdentity ? element.view() : eval(right, element);
    if (!result.is_null()) out.add(std::move(result));
  }
  return std::move(out).finish();
}

// Python's slice semantics (negative indices count from the end, bounds are clamped).
Value Evaluator::slice(const Node& node, const Value& current) {
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
  std::vector<const Json*> items;
  if (step > 0) {
    for (std::int64_t i = start; i < stop; i = (stop - i > step) ? i + step : stop) {
      items.push_back(&current.at(static_cast<std::size_t>(i)));
    }
  } else {
    for (std::int64_t i = start; i > stop; i = (i - stop > -step) ? i + step : stop) {
      items.push_back(&current.at(static_cast<std::size_t>(i)));
    }
  }
  return Value::refs(std::move(items));
}

Value Evaluator::comparator(const Node& node, const Value& current) {
  const Value left = eval(*node.children[0], current);
  const Value right = eval(*node.children[1], current);
  const Json& a = left.get();
  const Json& b = right.get();
  switch (node.op) {
    case Comparator::kEq: return Value::own(Json(json_equal(a, b)));
    case Comparator::kNe: return Value::own(Json(!json_equal(a, b)));
    default: break;
  }
  int c = 0;
  if (a.is_number() && b.is_number()) {
    c = compare_numbers(a, b);
  } else if (a.is_string() && b.is_string()) {
    // The specification orders numbers only; jmespath.py (which az uses) also orders strings by
    // code point, and scripts rely on it (`[?creationTime > '2018-06-01']`). UTF-8 byte order is
    // code-point order.
    const auto& x = a.get_ref<const std::string&>();
    const auto& y = b.get_ref<const std::string&>();
    c = x < y ? -1 : (x > y ? 1 : 0);
  } else {
    return {};
  }
  switch (node.op) {
    case Comparator::kLt: return Value::own(Json(c < 0));
    case Comparator::kLte: return Value::own(Json(c <= 0));
    case Comparator::kGt: return Value::own(Json(c > 0));
    default: return Value::own(Json(c >= 0));
  }
}

Value Evaluator::call(const Node& node, const Value& current) {
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
