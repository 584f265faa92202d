// JSON helpers shared by the control plane and the CLI: the Azure CLI's JSON text form
// (sorted keys, 2-space indent, ASCII escapes), resourceGroup injection, bounded file loading
// with Python-like error messages, and range-checked integers read from user JSON.
#pragma once
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace batchai {

using Json = nlohmann::json;

// json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=True) + "\n".
std::string dump_azure_json(const Json& value);

// Adds "resourceGroup" (5th segment of "id") to every object with an ARM "id", at any depth,
// without descending into "sourceVault" (docs/output.md §2.1 rule 4).
void inject_resource_group(Json& value);

// Limits on JSON the user hands in: configuration files are small documents, and deeper
// nesting only serves to exhaust the stack of every recursive consumer.
inline constexpr std::uintmax_t kMaxJsonFileBytes = 4 * 1024 * 1024;
inline constexpr std::size_t kMaxJsonDepth = 64;

// Byte offset of the bracket where JSON text first nests deeper than `max_depth` (strings
// skipped), if it does: checked before parsing, since every consumer of a value recurses.
std::optional<std::size_t> excess_nesting(std::string_view text, std::size_t max_depth);

// Reads and parses a JSON file; errors read like the Python CLI's:
// "[Errno 2] No such file or directory: 'path'" and
// "Expecting value: line 1 column 1 (char 0)"-style parse errors naming line and column.
// Only a regular file of at most kMaxJsonFileBytes is read (opened non-blocking, so a FIFO
// never hangs the command); nesting is limited to kMaxJsonDepth. Throws InvalidArgument.
Json load_json_file(const std::filesystem::path& path);

// Parses JSON text; on failure (syntax, nesting deeper than kMaxJsonDepth) throws
// InvalidArgument naming the line and column.
Json parse_json_text(const std::string& text, const std::string& origin);

// nlohmann's exception text without its "[json.exception.type_error.302] " prefix.
std::string json_error_text(const nlohmann::json::exception& error);

// An integer of user JSON, checked as 64-bit before any narrowing: InvalidArgument
// "<field> must be an integer ..." for non-integers (strings, 2.5, 1e20) and
// "<field> must be at least <min> and at most <max>, got <value>." outside the range.
std::int64_t checked_integer(const Json& value, const std::string& field, std::int64_t min,
                             std::int64_t max = std::numeric_limits<std::int32_t>::max());

// Value at `key` when present and not null, else `fallback`.
template <typename T>
T value_or(const Json& object, const char* key, T fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  return it->get<T>();
}

// `object[key]` when `object` is an object holding `key`, else null (never throws, never inserts).
inline Json member_or_null(const Json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? Json(nullptr) : *it;
}

}  // namespace batchai
