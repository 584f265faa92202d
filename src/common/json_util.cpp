// JSON text forms and file loading.
#include "batchai/common/json_util.hpp"

#include <fstream>
#include <sstream>

#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"

namespace batchai {

std::string dump_azure_json(const Json& value) { return value.dump(2, ' ', true) + "\n"; }

void inject_resource_group(Json& value) {
  if (value.is_array()) {
    for (auto& item : value) inject_resource_group(item);
    return;
  }
  if (!value.is_object()) return;
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (it.key() != "sourceVault") inject_resource_group(it.value());
  }
  auto id = value.find("id");
  if (id != value.end() && id->is_string() && !value.contains("resourceGroup")) {
    if (auto parsed = parse_arm_id(id->get<std::string>())) value["resourceGroup"] = parsed->resource_group;
  }
}

Json parse_json_text(const std::string& text, const std::string& origin) {
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    // Translate the byte offset into line/column like Python's json module does.
    std::size_t offset = e.byte == 0 ? 0 : e.byte - 1;
    if (offset > text.size()) offset = text.size();
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i < offset; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string what = text.empty() || offset >= text.size() ? "Expecting value" : "Invalid JSON";
    throw InvalidArgument(what + ": line " + std::to_string(line) + " column " + std::to_string(column) +
                          " (char " + std::to_string(offset) + ") in " + origin);
  }
}

Json load_json_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidArgument("[Errno 2] No such file or directory: '" + path.string() + "'");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parse_json_text(buffer.str(), "'" + path.string() + "'");
}

}  // namespace batchai
