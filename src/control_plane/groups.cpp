// `az group ...`: resource groups.
#include "batchai/control_plane/groups.hpp"

#include <algorithm>

#include "batchai/common/ids.hpp"
#include "context.hpp"
#include "reconciler.hpp"
#include "jobs/job_ending.hpp"
#include "rows.hpp"
#include "location_rules.hpp"
#include "tag_rules.hpp"
#include "store.hpp"

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
      auto st = cx_.store().prepare("SELECT doc FROM resource_groups WHERE name_lc = ?");
      st.bind(1, to_lower(name));
      st.step();
      Json d = parse_doc(st.text(0));
      if (tags) {
        d["tags"] = *tags;
        cx_.store().prepare("UPDATE resource_groups SET doc = ? WHERE name_lc = ?").bind(1, dump_doc(d)).bind(2, to_lower(name)).run();
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
    cx_.store().prepare("INSERT INTO resource_groups(name_lc, name, location, doc) VALUES (?, ?, ?, ?)")
        .bind(1, to_lower(name)).bind(2, name).bind(3, loc).bind(4, dump_doc(d)).run();
    return d;
  });
  return doc;
}

Json Groups::update_tags(const std::string& name, const Json& tags) {
  checked_tags(tags);
  return cx_.store().write([&] {
    auto st = cx_.store().prepare("SELECT doc FROM resource_groups WHERE name_lc = ?");
    st.bind(1, to_lower(name));
    if (!st.step()) require_group(cx_.store(), name);  // throws the service's ResourceGroupNotFound
    Json d = parse_doc(st.text(0));
    d["tags"] = tags;
    cx_.store().prepare("UPDATE resource_groups SET doc = ? WHERE name_lc = ?").bind(1, dump_doc(d)).bind(2, to_lower(name)).run();
    return d;
  });
}

Json Groups::show(const std::string& name) {
  reconciler_.reconcile();
  return cx_.store().read([&] {
    auto st = cx_.store().prepare("SELECT doc FROM resource_groups WHERE name_lc = ?");
    st.bind(1, to_lower(name));
    if (!st.step()) require_group(cx_.store(), name);
    return parse_doc(st.text(0));
  });
}

Json Groups::list() {
  reconciler_.reconcile();
  return cx_.store().read([&] {
    Json out = Json::array();
    auto st = cx_.store().prepare("SELECT doc FROM resource_groups ORDER BY name_lc");
    while (st.step()) out.push_back(parse_doc(st.text(0)));
    return out;
  });
}

bool Groups::exists(const std::string& name) {
  return cx_.store().read([&] { return find_group(cx_.store(), name).has_value(); });
}

void Groups::remove(const std::string& name) {
  cx_.store().write([&] {
    const GroupRow group = require_group(cx_.store(), name);
    std::vector<std::pair<std::int64_t, std::string>> workspaces;
    {
      auto st = cx_.store().prepare("SELECT id, name FROM workspaces WHERE rg_lc = ?");
      st.bind(1, to_lower(name));
      while (st.step()) workspaces.emplace_back(st.integer(0), st.text(1));
    }
    const std::string with = " with its resource group '" + group.name + "'";
    for (const auto& [id, workspace] : workspaces) ending_.end_jobs_of_workspace(id, workspace, with);
    std::vector<std::string> accounts;
    {
      auto st = cx_.store().prepare("SELECT name_lc FROM storage_accounts WHERE rg_lc = ?");
      st.bind(1, to_lower(name));
      while (st.step()) accounts.push_back(st.text(0));
    }
    for (const auto& a : accounts) trash(cx_.store(), cx_.layout().storage_account(a));
    trash(cx_.store(), cx_.layout().shared() / "clusters" / to_lower(name));
    trash(cx_.store(), cx_.layout().shared() / "fileservers" / to_lower(name));
    // Workspaces, clusters, nodes, experiments, file servers and accounts go by ON DELETE CASCADE.
    cx_.store().prepare("DELETE FROM resource_groups WHERE name_lc = ?").bind(1, to_lower(name)).run();
  });
  cx_.empty_trash();
}

}  // namespace batchai::control_plane
