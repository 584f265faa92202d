// The formatters of `-o json|jsonc|table|tsv|yaml|yamlc|none` (formats.cpp) and render(), the one
// way a command's result reaches stdout; `-o table` itself is table.hpp.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "output/output.hpp"

namespace batchai::cli::output {

// "json", "jsonc", ...; throws UsageError naming the allowed values otherwise.
Format parse_format(std::string_view name);
const std::vector<std::string>& format_names();

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
std::string render_tsv(const OJson& result);
std::string render_yaml(const OJson& result, bool color);

}  // namespace batchai::cli::output
