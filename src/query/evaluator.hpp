// Tree-walking evaluator for JMESPath syntax trees. Intermediate results are Values that either
// borrow from the input document (or a literal in the tree) or own a freshly built JSON value,
// so field access on a large document never copies it.
#pragma once
#include <utility>

#include "ast.hpp"

namespace batchai::query::detail {

const Json& null_json();

class Value {
 public:
  Value() : ref_(&null_json()) {}
  static Value borrow(const Json& json) { return Value(&json, Json()); }
  static Value own(Json json) { return Value(nullptr, std::move(json)); }

  const Json& get() const { return ref_ != nullptr ? *ref_ : owned_; }
  bool owned() const { return ref_ == nullptr; }
  // Only for owned values: lets a consumer move parts out instead of copying them.
  Json& mutable_owned() { return owned_; }
  // The value as an independent Json: moved when owned, copied when borrowed.
  Json take() && { return ref_ != nullptr ? *ref_ : std::move(owned_); }

 private:
  Value(const Json* ref, Json owned) : ref_(ref), owned_(std::move(owned)) {}
  const Json* ref_;  // nullptr means the value is owned_
  Json owned_;
};

class Evaluator {
 public:
  Value eval(const Node& node, const Json& current);
  // Evaluates `node` on `base`, making sure the result does not point into `base` when `base`
  // is a temporary about to be destroyed.
  Value eval_on(const Node& node, Value base);

 private:
  Value projection(const Node& node, const Json& current);
  Value value_projection(const Node& node, const Json& current);
  Value filter_projection(const Node& node, const Json& current);
  Value flatten(const Node& node, const Json& current);
  Value slice(const Node& node, const Json& current);
  Value comparator(const Node& node, const Json& current);
  Value call(const Node& node, const Json& current);
};

}  // namespace batchai::query::detail
