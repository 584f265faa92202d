// Azure Resource Manager ids, resource-name rules and random identifiers.
// ARM ids look like /subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.BatchAI/workspaces/{ws}/...
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace batchai {

// The fixed subscription of the local control plane (overridable with BATCHAI_SUBSCRIPTION_ID).
std::string subscription_id();

// Builds "/subscriptions/{sub}/resourceGroups/{rg}" + for each (type, name): "/{type}/{name}",
// with "/providers/Microsoft.BatchAI" inserted before the first pair when `provider` is set.
std::string arm_id(std::string_view subscription, std::string_view resource_group,
                   const std::vector<std::pair<std::string, std::string>>& path,
                   std::string_view provider = "Microsoft.BatchAI");

struct ParsedId {
  std::string subscription;
  std::string resource_group;
  std::string provider;                                    // e.g. "Microsoft.BatchAI"
  std::vector<std::pair<std::string, std::string>> path;   // (type, name) pairs after the provider
  // Name of the first path element whose type equals `type` (case-insensitive), if any.
  std::optional<std::string> name_of(std::string_view type) const;
};
// nullopt when the text is not an ARM id of that shape.
std::optional<ParsedId> parse_arm_id(std::string_view id);
bool looks_like_arm_id(std::string_view text);

// Resource-name check of the service: 1..max_len characters matching ^[-\w_]+$ (the
// message follows the SDK's "validation error: Parameter '...' must conform ..." text).
void validate_resource_name(std::string_view name, std::string_view parameter, std::size_t max_len = 64);

// Random version-4 UUID text (lower-case, with dashes).
std::string new_uuid();
// `n` random characters from `alphabet`.
std::string random_string(std::size_t n, std::string_view alphabet = "abcdefghijklmnopqrstuvwxyz");

bool iequals(std::string_view a, std::string_view b);
std::string to_lower(std::string_view s);

}  // namespace batchai
