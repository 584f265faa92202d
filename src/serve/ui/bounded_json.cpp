#include "ui/bounded_json.hpp"

#include <string>
#include <vector>

namespace batchai::serve {
namespace {

// nlohmann's SAX interface, building the document and counting as it goes.
class BoundedBuilder {
 public:
  explicit BoundedBuilder(const JsonBudget& budget) : budget_(budget) {}

  bool null() { return add(Json(nullptr)) != nullptr; }
  bool boolean(bool v) { return add(Json(v)) != nullptr; }
  bool number_integer(Json::number_integer_t v) { return add(Json(v)) != nullptr; }
  bool number_unsigned(Json::number_unsigned_t v) { return add(Json(v)) != nullptr; }
  bool number_float(Json::number_float_t v, const std::string&) { return add(Json(v)) != nullptr; }
  bool string(std::string& v) { return add(Json(std::move(v))) != nullptr; }
  bool binary(Json::binary_t&) { return false; }  // never in JSON text
  bool start_object(std::size_t) { return open(Json::object()); }
  bool start_array(std::size_t) { return open(Json::array()); }
  bool key(std::string& k) {
    key_ = std::move(k);
    return true;
  }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

  Json root;

 private:
  // The value placed in its parent (or as the root); nullptr once the budget is spent.
  Json* add(Json value) {
    if (++values_ > budget_.max_values) return nullptr;
    if (stack_.empty()) {
      root = std::move(value);
      return &root;
    }
    Json& parent = *stack_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(value));
      return &parent.back();
    }
    Json& slot = parent[key_];
    slot = std::move(value);
    return &slot;
  }
  // Only the innermost open container is ever added to, so the pointers held stay valid.
  bool open(Json container) {
    if (stack_.size() >= budget_.max_depth) return false;
    Json* placed = add(std::move(container));
    if (placed == nullptr) return false;
    stack_.push_back(placed);
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }

  const JsonBudget& budget_;
  std::vector<Json*> stack_;
  std::string key_;
  std::size_t values_ = 0;
};

}  // namespace

std::optional<Json> parse_bounded_json(std::string_view text, const JsonBudget& budget) {
  if (text.size() > budget.max_bytes) return std::nullopt;
  BoundedBuilder builder(budget);
  bool ok = false;
  try {
    ok = Json::sax_parse(text.begin(), text.end(), &builder);
  } catch (const Json::exception&) {
    ok = false;
  }
  if (!ok) return std::nullopt;
  return std::move(builder.root);
}

}  // namespace batchai::serve
