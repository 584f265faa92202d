// The CLI's output layer: a command's result (nlohmann::json from the control plane) goes through
// --query, then one of the formatters of `-o json|jsonc|table|tsv|yaml|yamlc|none` (docs/output.md §2).
// Everything a command prints to stdout passes through render() (formats.hpp); this header holds
// the layer's types.
#pragma once
#include <functional>

#include <nlohmann/json.hpp>

#include "batchai/common/json_util.hpp"

namespace batchai::cli::output {

// Keeps key order: sorted for service documents, projection order for --query results.
using OJson = nlohmann::ordered_json;

enum class Format { kJson, kJsonc, kTable, kTsv, kYaml, kYamlc, kNone };

// Turns a result into the rows of `-o table` (docs/output.md §2.3); not applied when --query is active.
using TableTransformer = std::function<OJson(const OJson&)>;

struct RenderOptions {
  Format format = Format::kJson;
  bool query_active = false;
  TableTransformer transformer;  // empty = generic table
  bool color = false;            // jsonc/yamlc colour (only when stdout is a TTY)
};

}  // namespace batchai::cli::output
