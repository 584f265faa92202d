// JSON helpers shared by the control plane and the CLI: the Azure CLI's JSON text form
// (sorted keys, 2-space indent, ASCII escapes), resourceGroup injection, and file loading
// with Python-like error messages.
#pragma once
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace batchai {

using Json = nlohmann::json;

// json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=True) + "\n".
std::string dump_azure_json(const Json& value);

// Adds "resourceGroup" (5th segment of "id") to every object with an ARM "id", at any depth,
// without descending into "sourceVault" (spec §2.1 rule 4).
void inject_resource_group(Json& value);

// Reads and parses a JSON file; errors read like the Python CLI's:
// "[Errno 2] No such file or directory: 'path'" and
// "Expecting value: line 1 column 1 (char 0)"-style parse errors naming line and column.
Json load_json_file(const std::filesystem::path& path);

// Parses JSON text; on failure throws InvalidArgument naming the line and column.
Json parse_json_text(const std::string& text, const std::string& origin);

// Value at `key` when present and not null, else `fallback`.
template <typename T>
T value_or(const Json& object, const char* key, T fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  return it->get<T>();
}

}  // namespace batchai
