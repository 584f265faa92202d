// `az group ...`: resource groups.
#include "batchai/control_plane/groups.hpp"

#include <algorithm>

#include "batchai/common/ids.hpp"
#include "context.hpp"
#include "reconciler.hpp"
#include "jobs/job_ending.hpp"
#include "store/resources.hpp"
#include "location_rules.hpp"
#include "tag_rules.hpp"
#include "store/store.hpp"

namespace batchai::control_plane {

using namespace detail;

namespace {

void validate_group_name(const std::string& name) {
  bool ok = !name.empty() && name.size() <= 90 && name.back() != '.' &&
            std::all_of(name.begin(), name.end(), [](unsigned char c) {
              return std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '(' || c == ')';
            });
  if (!ok)
    throw InvalidArgument("Resource group names only allow up to 90 alphanumeric characters, periods, underscores, "
                          "hyphens and parenthesis and cannot end in a period: '" + name + "'.");
}

}  // namespace

Json Groups::create(const std::string& name, const std::string& location, const std::optional<Json>& tags) {
  validate_group_name(name);
  if (tags) checked_tags(*tags);
  const std::string loc = canonical_location(location, kResourceGroupType);
  Json doc = cx_.store().write([&] {
    if (auto existing = find_group(cx_.store(), name)) {
      if (existing->location != loc)
        throw InvalidArgument("Invalid resource group location '" + loc + "'. The Resource group already exists in "
                              "location '" + existing->location + "'.");
      Json d = group_doc(cx_.store(), name).value_or(Json::object());
      if (tags) {
        d["tags"] = *tags;
        save_group_doc(cx_.store(), name, d);
      }
      return d;
    }
    Json d = {{"id", arm_id(subscription_id(), name, {})},
              {"location", loc},
              {"managedBy", nullptr},
              {"name", name},
              {"properties", {{"provisioningState", "Succeeded"}}},
              {"tags", tags ? *tags : Json(nullptr)},
              {"type", "Microsoft.Resources/resourceGroups"}};
    insert_group(cx_.store(), name, loc, d);
    return d;
  });
  return doc;
}

Json Groups::update_tags(const std::string& name, const Json& tags) {
  checked_tags(tags);
  return cx_.store().write([&] {
    auto d = group_doc(cx_.store(), name);
    if (!d) require_group(cx_.store(), name);  // throws the service's ResourceGroupNotFound
    (*d)["tags"] = tags;
    save_group_doc(cx_.store(), name, *d);
    return *d;
  });
}

Json Groups::show(const std::string& name) {
  reconciler_.reconcile();
  return cx_.store().read([&] {
    auto d = group_doc(cx_.store(), name);
    if (!d) require_group(cx_.store(), name);
    return *d;
  });
}

Json Groups::list() {
  reconciler_.reconcile();
  return cx_.store().read([&] {
    return group_docs(cx_.store());
  });
}

bool Groups::exists(const std::string& name) {
  return cx_.store().read([&] { return find_group(cx_.store(), name).has_value(); });
}

void Groups::remove(const std::string& name) {
  cx_.store().write([&] {
    const GroupRow group = require_group(cx_.store(), name);
    const auto workspaces = workspaces_of_group(cx_.store(), name);
    const std::string with = " with its resource group '" + group.name + "'";
    for (const auto& [id, workspace] : workspaces) ending_.end_jobs_of_workspace(id, workspace, with);
    for (const auto& a : accounts_of_group(cx_.store(), name)) trash(cx_.store(), cx_.layout().storage_account(a));
    trash(cx_.store(), cx_.layout().shared() / "clusters" / to_lower(name));
    trash(cx_.store(), cx_.layout().shared() / "fileservers" / to_lower(name));
    delete_group(cx_.store(), name);  // and all under it
  });
  cx_.empty_trash();
}

}  // namespace batchai::control_plane
