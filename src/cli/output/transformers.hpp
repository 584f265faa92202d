// Table transformers: the exact `-o table` columns of docs/output.md §2.3, one per resource kind.
// Each accepts one resource or a list and returns a list of rows (ordered objects).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "output/output.hpp"

namespace batchai::cli::output {

OJson workspace_table(const OJson& result);
OJson cluster_table(const OJson& result);
OJson experiment_table(const OJson& result);
OJson job_table(const OJson& result);
// The top-level keys job_table reads (a list may carry only these; see Args::table_fields).
extern const std::vector<std::string> kJobTableFields;
OJson job_file_table(const OJson& result);
OJson file_server_table(const OJson& result);
OJson remote_login_table(const OJson& result);
OJson setup_file_table(const OJson& result);
OJson usage_table(const OJson& result);

// The rows of `transformer` (one of the above) read straight from a sorted-key document, with
// no ordered copy of it; nullopt for any other transformer.
std::optional<OJson> transform_sorted(const TableTransformer& transformer, const Json& result);

}  // namespace batchai::cli::output
