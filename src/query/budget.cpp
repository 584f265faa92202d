// Per-thread accounting of the bytes an evaluation copies (see budget.hpp).
#include "budget.hpp"

#include <string>

namespace batchai::query::detail {
namespace {

struct Account {
  bool active = false;
  std::size_t used = 0;
};
thread_local Account account;

[[noreturn]] void exhausted() {
  throw QueryError(ErrorKind::kInvalidValue, 0,
                   "the result grew past " + std::to_string(kMaxProducedBytes / (1024 * 1024)) +
                       " MiB while being evaluated; narrow the expression (filter, or select fewer fields)");
}

void add(std::size_t bytes) {
  account.used += bytes;
  if (account.used > kMaxProducedBytes) exhausted();
}

// Walks the value charging as it goes, so a huge copy stops early (depth is bounded by the
// inputs: stored documents and literals are depth-limited where they are read).
void walk(const Json& json) {
  add(sizeof(Json));
  switch (json.type()) {
    case Json::value_t::string: add(sizeof(std::string) + json.get_ref<const std::string&>().size()); break;
    case Json::value_t::array:
      add(sizeof(Json::array_t));
      for (const auto& item : json) walk(item);
      break;
    case Json::value_t::object:
      add(sizeof(Json::object_t));
      for (const auto& [key, value] : json.items()) {
        add(sizeof(std::string) + key.size());
        walk(value);
      }
      break;
    default: break;
  }
}

}  // namespace

BudgetScope::BudgetScope() : was_active_(account.active), was_used_(account.used) {
  account.active = true;
  account.used = 0;
}

BudgetScope::~BudgetScope() {
  account.active = was_active_;
  account.used = was_used_;
}

void charge(const Json& json) {
  if (account.active) walk(json);
}

void charge_bytes(std::size_t bytes) {
  if (account.active) add(bytes);
}

}  // namespace batchai::query::detail
