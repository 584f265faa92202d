// `-o json|jsonc|tsv|yaml|yamlc|none` and the dispatcher over all formats (docs/output.md §2.1 rule 8, §2.4).
#include "output/formats.hpp"

#include <cstdint>
#include <string>

#include <yaml-cpp/yaml.h>

#include "batchai/common/errors.hpp"
#include "output/table.hpp"
#include "output/transformers.hpp"

namespace batchai::cli::output {
namespace {

constexpr const char* kReset = "\x1b[0m";
constexpr const char* kKeyColor = "\x1b[94m";
constexpr const char* kStringColor = "\x1b[32m";
constexpr const char* kLiteralColor = "\x1b[36m";

// knack _TsvOutput._dump_obj: lists print their length, objects an empty field.
template <typename J>
void tsv_value(const J& v, std::string& out) {
  if (v.is_array()) {
    out += std::to_string(v.size());
  } else if (v.is_object()) {
    // empty field keeps the column count stable
  } else if (v.is_null()) {
    out += "None";
  } else if (v.is_string()) {
    out += v.template get_ref<const std::string&>();
  } else if (v.is_boolean()) {
    out += v.template get<bool>() ? "True" : "False";
  } else {
    out += v.dump();
  }
}

template <typename J>
void tsv_row(const J& row, std::string& out) {
  if (row.is_object() || row.is_array()) {
    bool first = true;
    for (const auto& value : row) {
      if (!first) out += '\t';
      first = false;
      tsv_value(value, out);
    }
  } else if (row.is_boolean()) {
    out += row.template get<bool>() ? "true" : "false";  // az prints a top-level bool like JSON
  } else {
    tsv_value(row, out);
  }
  out += '\n';
}

// Python's YAML would quote strings that read back as another type.
bool needs_quotes(const std::string& s) {
  if (s.empty()) return true;
  static const char* kSpecial[] = {"true", "false", "yes", "no", "on", "off", "null", "~", "y", "n"};
  std::string lower;
  for (char c : s) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* special : kSpecial) {
    if (lower == special) return true;
  }
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return end != nullptr && *end == '\0';
}

void emit_yaml(YAML::Emitter& out, const Json& v) {
  if (v.is_object()) {
    if (v.empty()) {
      out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
      return;
    }
    out << YAML::BeginMap;
    for (auto it = v.begin(); it != v.end(); ++it) {
      out << YAML::Key << it.key() << YAML::Value;
      emit_yaml(out, it.value());
    }
    out << YAML::EndMap;
  } else if (v.is_array()) {
    if (v.empty()) {
      out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
      return;
    }
    out << YAML::BeginSeq;
    for (const auto& item : v) emit_yaml(out, item);
    out << YAML::EndSeq;
  } else if (v.is_null()) {
    out << YAML::Null;
  } else if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (needs_quotes(s)) out << YAML::SingleQuoted;
    out << s;
  } else if (v.is_boolean()) {
    out << YAML::TrueFalseBool << v.get<bool>();
  } else {
    out << v.dump();
  }
}

template <typename J>
std::string tsv_text(const J& result) {
  std::string out;
  if (result.is_array()) {
    for (const auto& row : result) tsv_row(row, out);
  } else {
    tsv_row(result, out);
  }
  return out;
}

// Colours a YAML line: "key:" in key colour, the rest as a value.
std::string colour_yaml(const std::string& text) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    std::size_t colon = line.find(": ");
    if (colon == std::string::npos && !line.empty() && line.back() == ':') colon = line.size() - 1;
    std::size_t indent = line.find_first_not_of(" -");
    if (colon != std::string::npos && indent != std::string::npos && indent < colon) {
      out += line.substr(0, indent) + kKeyColor + line.substr(indent, colon - indent) + kReset + ":";
      if (colon + 1 < line.size()) out += std::string(" ") + kStringColor + line.substr(colon + 2) + kReset;
    } else {
      out += line;
    }
    out += '\n';
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

std::string yaml_text(const Json& sorted, bool color) {
  YAML::Emitter emitter;
  emitter.SetNullFormat(YAML::LowerNull);
  emitter.SetIndent(2);
  emit_yaml(emitter, sorted);
  std::string text = std::string(emitter.c_str()) + "\n";
  return color ? colour_yaml(text) : text;
}

}  // namespace

const std::vector<std::string>& format_names() {
  static const std::vector<std::string> kNames = {"json", "jsonc", "none", "table", "tsv", "yaml", "yamlc"};
  return kNames;
}

Format parse_format(std::string_view name) {
  if (name == "json") return Format::kJson;
  if (name == "jsonc") return Format::kJsonc;
  if (name == "table") return Format::kTable;
  if (name == "tsv") return Format::kTsv;
  if (name == "yaml") return Format::kYaml;
  if (name == "yamlc") return Format::kYamlc;
  if (name == "none") return Format::kNone;
  throw UsageError("argument --output/-o: invalid choice: '" + std::string(name) +
                   "' (choose from 'json', 'jsonc', 'none', 'table', 'tsv', 'yaml', 'yamlc')");
}

OJson to_ordered(const Json& value) {
  // nlohmann::json keeps objects in a std::map, so the copy is already in sorted-key order.
  if (value.is_object()) {
    OJson out = OJson::object();
    for (auto it = value.begin(); it != value.end(); ++it) out[it.key()] = to_ordered(it.value());
    return out;
  }
  if (value.is_array()) {
    OJson out = OJson::array();
    for (const auto& item : value) out.push_back(to_ordered(item));
    return out;
  }
  switch (value.type()) {
    case Json::value_t::string: return value.get_ref<const std::string&>();
    case Json::value_t::boolean: return value.get<bool>();
    case Json::value_t::number_integer: return value.get<std::int64_t>();
    case Json::value_t::number_unsigned: return value.get<std::uint64_t>();
    case Json::value_t::number_float: return value.get<double>();
    default: return nullptr;
  }
}

OJson to_ordered(Json&& value) {
  switch (value.type()) {
    case Json::value_t::object: {
      // Source keys are unique and sorted: append without lookups, moving keys and values out.
      auto& source = value.get_ref<Json::object_t&>();
      OJson out = OJson::object();
      auto& target = out.get_ref<OJson::object_t&>();
      target.reserve(source.size());
      while (!source.empty()) {
        auto node = source.extract(source.begin());
        target.emplace_back(std::move(node.key()), to_ordered(std::move(node.mapped())));
      }
      return out;
    }
    case Json::value_t::array: {
      auto& source = value.get_ref<Json::array_t&>();
      OJson out = OJson::array();
      auto& target = out.get_ref<OJson::array_t&>();
      target.reserve(source.size());
      for (auto& item : source) target.push_back(to_ordered(std::move(item)));
      return out;
    }
    case Json::value_t::string: return OJson(std::move(value.get_ref<std::string&>()));
    default: return to_ordered(static_cast<const Json&>(value));
  }
}

Json to_sorted(const OJson& value) {
  if (value.is_object()) {
    Json out = Json::object();
    for (auto it = value.begin(); it != value.end(); ++it) out[it.key()] = to_sorted(it.value());
    return out;
  }
  if (value.is_array()) {
    Json out = Json::array();
    for (const auto& item : value) out.push_back(to_sorted(item));
    return out;
  }
  switch (value.type()) {
    case OJson::value_t::string: return value.get_ref<const std::string&>();
    case OJson::value_t::boolean: return value.get<bool>();
    case OJson::value_t::number_integer: return value.get<std::int64_t>();
    case OJson::value_t::number_unsigned: return value.get<std::uint64_t>();
    case OJson::value_t::number_float: return value.get<double>();
    default: return nullptr;
  }
}

std::string render_json(const OJson& result) { return dump_azure_json(to_sorted(result)); }

namespace {

// Walks JSON text: strings followed by ':' are keys, other strings are values.
std::string colour_json(const std::string& plain) {
  std::string out;
  for (std::size_t i = 0; i < plain.size();) {
    char c = plain[i];
    if (c == '"') {
      std::size_t j = i + 1;
      while (j < plain.size() && plain[j] != '"') j += plain[j] == '\\' ? 2 : 1;
      std::string token = plain.substr(i, j + 1 - i);
      bool is_key = j + 1 < plain.size() && plain[j + 1] == ':';
      out += (is_key ? kKeyColor : kStringColor) + token + kReset;
      i = j + 1;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '-') {
      std::size_t j = i;
      while (j < plain.size() && (std::isalnum(static_cast<unsigned char>(plain[j])) || plain[j] == '.' ||
                                  plain[j] == '-' || plain[j] == '+')) {
        ++j;
      }
      out += kLiteralColor + plain.substr(i, j - i) + kReset;
      i = j;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

}  // namespace

std::string render_jsonc(const OJson& result, bool color) {
  std::string plain = render_json(result);
  return color ? colour_json(plain) : plain;
}

std::string render_tsv(const OJson& result) { return tsv_text(result); }

std::string render_yaml(const OJson& result, bool color) { return yaml_text(to_sorted(result), color); }

std::string render(const OJson& result, const RenderOptions& options) {
  switch (options.format) {
    case Format::kJson: return render_json(result);
    case Format::kJsonc: return render_jsonc(result, options.color);
    case Format::kTable: return render_table(result, options.transformer, options.query_active);
    case Format::kTsv: return render_tsv(result);
    case Format::kYaml: return render_yaml(result, false);
    case Format::kYamlc: return render_yaml(result, options.color);
    case Format::kNone: return "";
  }
  return "";
}

std::string render_sorted(Json&& result, const RenderOptions& options) {
  switch (options.format) {
    case Format::kJson: return dump_azure_json(result);
    case Format::kJsonc: {
      std::string plain = dump_azure_json(result);
      return options.color ? colour_json(plain) : plain;
    }
    case Format::kTable: {
      if (auto rows = transform_sorted(options.transformer, result)) return render_table(*rows, nullptr, false);
      return render_table(to_ordered(std::move(result)), options.transformer, false);
    }
    case Format::kTsv: return tsv_text(result);
    case Format::kYaml: return yaml_text(result, false);
    case Format::kYamlc: return yaml_text(result, options.color);
    case Format::kNone: return "";
  }
  return "";
}

}  // namespace batchai::cli::output
