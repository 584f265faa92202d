// The CLI's output layer: a command's result (nlohmann::json from the control plane) goes through
// --query, then one of the formatters of `-o json|jsonc|table|tsv|yaml|yamlc|none` (docs/behaviour.md §2).
// Everything a command prints to stdout passes through render().
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "batchai/common/json_util.hpp"

namespace batchai::cli::output {

// Keeps key order: sorted for service documents, projection order for --query results.
using OJson = nlohmann::ordered_json;

enum class Format { kJson, kJsonc, kTable, kTsv, kYaml, kYamlc, kNone };

// "json", "jsonc", ...; throws UsageError naming the allowed values otherwise.
Format parse_format(std::string_view name);
const std::vector<std::string>& format_names();

// Turns a result into the rows of `-o table` (docs/behaviour.md §2.3); not applied when --query is active.
using TableTransformer = std::function<OJson(const OJson&)>;

struct RenderOptions {
  Format format = Format::kJson;
  bool query_active = false;
  TableTransformer transformer;  // empty = generic table
  bool color = false;            // jsonc/yamlc colour (only when stdout is a TTY)
};

// Sorted-key copy of `value` as an ordered document (the rvalue form moves strings out).
OJson to_ordered(const Json& value);
OJson to_ordered(Json&& value);
// Back to a sorted-key document (json/yaml print sorted keys like the Azure CLI).
Json to_sorted(const OJson& value);

// The whole text to write to stdout ("" for Format::kNone).
std::string render(const OJson& result, const RenderOptions& options);
// The same for a service document when no --query runs: its keys are already sorted, so
// each format reads it as it is (no ordered copy; 10,000-job lists stay fast).
std::string render_sorted(Json&& result, const RenderOptions& options);

std::string render_json(const OJson& result);
std::string render_jsonc(const OJson& result, bool color);
// tabulate "simple" table; throws batchai::Error("Table output unavailable...") when no column remains.
std::string render_table(const OJson& result, const TableTransformer& transformer, bool query_active);
std::string render_tsv(const OJson& result);
std::string render_yaml(const OJson& result, bool color);

// A table laid out with tabulate's "simple" style: columns two spaces apart, each as wide as
// max(header + 2, widest cell), numeric columns right-aligned (decimal points lined up).
struct TableCell {
  std::optional<OJson> value;  // nullopt = missing (prints empty)
};
std::string tabulate_simple(const std::vector<std::string>& headers,
                            const std::vector<std::vector<TableCell>>& rows);

}  // namespace batchai::cli::output
