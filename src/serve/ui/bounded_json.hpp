// JSON that a job wrote (metrics.json, batchai-manifest.json), parsed for the dashboard under a
// budget of bytes, nesting and values: nlohmann's SAX parser feeds a document builder that stops
// at the first value past the budget, so hostile text (4 MiB of '[') costs its bytes, not a DOM.
#pragma once
#include <cstddef>
#include <optional>
#include <string_view>

#include "batchai/common/json_util.hpp"

namespace batchai::serve {

struct JsonBudget {
  std::size_t max_bytes;
  std::size_t max_depth;     // containers open at once
  std::size_t max_values;    // values of any kind (containers included), keys not counted
};

// The document, or nullopt when `text` is not JSON or passes any bound of `budget`.
std::optional<Json> parse_bounded_json(std::string_view text, const JsonBudget& budget);

}  // namespace batchai::serve
