// Tree-walking evaluator for JMESPath syntax trees. Intermediate results are Values that borrow
// from the input document (or a literal in the tree), own a freshly built JSON value, or list
// borrowed elements (what filters, projections and sort_by give), so `length([?x])` or
// `sort_by(@, &k)[0]` over 10,000 resources never deep-copies them.
#pragma once
#include <memory>
#include <utility>
#include <vector>

#include "ast.hpp"

namespace batchai::query::detail {

// The null every "nothing here" Value points at.
extern const Json kNullJson;

// An array made of pointers to elements that live elsewhere; `cache` holds the array as JSON
// once someone needs it in that form.
struct RefArray {
  std::vector<const Json*> items;
  mutable std::unique_ptr<Json> cache;
};

class Value {
 public:
  Value() = default;  // borrowed null
  static Value borrow(const Json& json) {
    Value v;
    v.ref_ = &json;
    return v;
  }
  static Value own(Json json) {
    Value v;
    v.kind_ = Kind::kOwned;
    v.owned_ = std::move(json);
    return v;
  }
  static Value refs(std::vector<const Json*> items) {
    Value v;
    v.kind_ = Kind::kRefs;
    v.refs_ = std::make_shared<RefArray>();
    v.refs_->items = std::move(items);
    return v;
  }

  Value(Value&&) noexcept = default;
  Value& operator=(Value&&) noexcept = default;
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;

  // A cheap Value showing the same data (borrowing from this one when it owns its JSON).
  Value view() const;

  // The value as JSON; a list of references is materialised (copied) once, on first use.
  const Json& get() const;
  // Moved when owned, copied otherwise.
  Json take() &&;

  bool owned() const { return kind_ == Kind::kOwned; }
  bool is_refs() const { return kind_ == Kind::kRefs; }
  // True when borrowed results may point into storage this Value owns (its JSON, or the
  // materialised form of its reference list): such results must be copied before it dies.
  bool has_storage() const { return kind_ == Kind::kOwned || (kind_ == Kind::kRefs && refs_->cache != nullptr); }

  // Array access without materialising a reference list.
  bool is_array() const { return kind_ == Kind::kRefs || get().is_array(); }
  bool is_null() const { return kind_ != Kind::kRefs && get().is_null(); }
  std::size_t size() const { return kind_ == Kind::kRefs ? refs_->items.size() : get().size(); }
  const Json& at(std::size_t i) const { return kind_ == Kind::kRefs ? *refs_->items[i] : get()[i]; }

 private:
  enum class Kind : std::uint8_t { kBorrowed, kOwned, kRefs };
  Kind kind_ = Kind::kBorrowed;
  const Json* ref_ = &kNullJson;
  Json owned_;
  std::shared_ptr<RefArray> refs_;
};

// JMESPath truthiness and type names of Values (no materialisation).
bool is_truthy(const Value& value);
const char* type_name(const Value& value);

// Collects the results of a projection or map(): a reference list while every result is
// borrowed from long-lived storage, switching to an owned JSON array otherwise.
class ResultList {
 public:
  // `borrow_ok`: borrowed results stay valid after the source is gone, so they may be kept as
  // references; otherwise they are copied.
  ResultList(std::size_t reserve, bool borrow_ok);
  void add(Value&& result);
  void add_json(Json&& json);
  Value finish() &&;

 private:
  void to_json();
  bool as_refs_;
  std::vector<const Json*> refs_;
  Json json_;
};

class Evaluator {
 public:
  Value eval(const Node& node, const Value& current);
  // Evaluates `node` on `base`, copying out any part of the result that points into storage
  // `base` owns, since `base` is a temporary about to be destroyed.
  Value eval_on(const Node& node, Value base);

 private:
  Value projection(const Node& node, const Value& current);
  Value filter_projection(const Node& node, const Value& current);
  Value value_projection(const Node& node, const Value& current);
  Value slice(const Node& node, const Value& current);
  Value comparator(const Node& node, const Value& current);
  Value call(const Node& node, const Value& current);
};

}  // namespace batchai::query::detail
