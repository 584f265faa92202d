// `batchai workspace ...`.
#include "batchai/control_plane/workspaces.hpp"

#include <algorithm>

#include "batchai/common/ids.hpp"
#include "context.hpp"
#include "reconciler.hpp"
#include "jobs/job_ending.hpp"
#include "store/store.hpp"
#include "store/resources.hpp"
#include "location_rules.hpp"
#include "tag_rules.hpp"

namespace batchai::control_plane {

using namespace detail;

namespace {

void validate_group_parameter(const std::string& rg) {
  bool ok = !rg.empty() && std::all_of(rg.begin(), rg.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_' || c == '.';
  });
  if (!ok)
    throw InvalidArgument(
        "validation error: Parameter 'resource_group_name' must conform to the following pattern: '^[-\\\\w\\\\._]+$'.");
}

Json set_tags(Store& store, const WorkspaceRef& ref, const Json& tags) {
  auto doc = workspace_doc(store, ref);
  if (!doc) throw NotFound("The specified workspace " + ref.workspace + " is not found", "WorkspaceNotFound");
  (*doc)["tags"] = tags;
  save_workspace_doc(store, ref, *doc);
  return *doc;
}

}  // namespace

Json Workspaces::update_tags(const WorkspaceRef& ref, const Json& tags) {
  checked_tags(tags);
  return cx_.store().write([&] { return set_tags(cx_.store(), ref, tags); });
}

Json Workspaces::create(const std::string& resource_group, const std::string& name,
                        const std::optional<std::string>& location, const std::optional<Json>& tags) {
  validate_group_parameter(resource_group);
  validate_resource_name(name, "workspace_name");
  if (tags) checked_tags(*tags);
  // An empty location means the group's (the CLI's default); any other must be a region.
  const std::optional<std::string> given =
      location && !location->empty()
          ? std::optional<std::string>(canonical_location(*location, "Microsoft.BatchAI/workspaces"))
          : std::nullopt;
  const auto now = cx_.clock().now();
  return cx_.store().write([&] {
    auto group = require_group(cx_.store(), resource_group);
    const std::optional<Json> existing = workspace_doc(cx_.store(), {resource_group, name});
    if (existing)  // create-or-update PUT: the existing one, its tags updated when given
      return tags ? set_tags(cx_.store(), {resource_group, name}, *tags) : *existing;
    const std::string loc = given.value_or(group.location);
    Json doc = {{"creationTime", format_iso(now)},
                {"id", arm_id(subscription_id(), group.name, {{"workspaces", name}})},
                {"location", loc},
                {"name", name},
                {"provisioningState", "succeeded"},
                {"provisioningStateTransitionTime", format_iso(now)},
                {"resourceGroup", group.name},
                {"tags", tags ? *tags : Json(nullptr)},
                {"type", "Microsoft.BatchAI/workspaces"}};
    insert_workspace(cx_.store(), resource_group, name, loc, doc);
    return doc;
  });
}

Json Workspaces::show(const WorkspaceRef& ref) {
  reconciler_.reconcile();
  return cx_.store().read([&] {
    auto doc = workspace_doc(cx_.store(), ref);
    if (!doc) throw NotFound("The specified workspace " + ref.workspace + " is not found", "WorkspaceNotFound");
    return *doc;
  });
}

Json Workspaces::list(const std::optional<std::string>& resource_group) {
  reconciler_.reconcile();
  return cx_.store().read([&] {
    if (resource_group) require_group(cx_.store(), *resource_group);
    return workspace_docs(cx_.store(), resource_group);
  });
}

void Workspaces::remove(const WorkspaceRef& ref) {
  cx_.store().write([&] {
    auto ws = require_workspace(cx_.store(), ref);
    ending_.end_jobs_of_workspace(ws.id, ws.name, "");
    trash(cx_.store(), cx_.layout().workspace_clusters(ws.resource_group, ws.name));
    trash(cx_.store(), cx_.layout().workspace_file_servers(ws.resource_group, ws.name));
    // Clusters (and their nodes), file servers and experiments go by ON DELETE CASCADE.
    delete_workspace(cx_.store(), ws.id);
  });
  cx_.empty_trash();
}

}  // namespace batchai::control_plane
