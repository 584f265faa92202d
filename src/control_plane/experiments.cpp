// `batchai experiment ...`.
#include "batchai/control_plane/experiments.hpp"

#include <algorithm>
#include <limits>

#include "batchai/common/ids.hpp"
#include "context.hpp"
#include "reconciler.hpp"
#include "jobs/job_ending.hpp"
#include "store/resources.hpp"
#include "store/store.hpp"

namespace batchai::control_plane {

using namespace detail;

namespace {

[[noreturn]] void experiment_not_found(const std::string& name) {
  throw NotFound("The specified experiment " + name + " is not found", "ExperimentNotFound");
}

}  // namespace

Json Experiments::create(const WorkspaceRef& ref, const std::string& name) {
  validate_resource_name(name, "experiment_name");
  const auto now = cx_.clock().now();
  return cx_.store().write([&] {
    auto ws = require_workspace(cx_.store(), ref);
    if (auto existing = experiment_doc(cx_.store(), ws.id, name)) return *existing;
    Json doc = {{"creationTime", format_iso(now)},
                {"id", arm_id(subscription_id(), ws.resource_group, {{"workspaces", ws.name}, {"experiments", name}})},
                {"name", name},
                {"provisioningState", "succeeded"},
                {"provisioningStateTransitionTime", format_iso(now)},
                {"resourceGroup", ws.resource_group},
                {"type", "Microsoft.BatchAI/workspaces/experiments"}};
    insert_experiment(cx_.store(), ws.id, name, doc);
    return doc;
  });
}

Json Experiments::show(const WorkspaceRef& ref, const std::string& name) {
  reconciler_.reconcile();
  return cx_.store().read([&] {
    auto doc = experiment_doc(cx_.store(), ref, name);
    if (!doc) {
      require_workspace(cx_.store(), ref);
      experiment_not_found(name);
    }
    return *doc;
  });
}

Json Experiments::list(const WorkspaceRef& ref) { return list_page(ref, {std::numeric_limits<std::size_t>::max(), ""}).items; }

Page Experiments::list_page(const WorkspaceRef& ref, const PageRequest& page) {
  if (page.limit == 0) throw InvalidArgument("A page holds at least one item.");
  if (page.after.size() > 256 || std::any_of(page.after.begin(), page.after.end(), [](unsigned char c) { return c < 0x20; }))
    throw InvalidArgument("The continuation token is not one this list made.", "InvalidSkipToken");
  reconciler_.reconcile();
  return cx_.store().read([&] {
    auto ws = require_workspace(cx_.store(), ref);
    // Hot path (10,000 experiments): one indexed query (keyset on name_lc, LIMIT limit + 1); the
    // documents are rebuilt from a few fields (SQLite's JSON reader is much faster than parsing
    // every document here).
    const std::string prefix = arm_id(subscription_id(), ws.resource_group, {{"workspaces", ws.name}}) + "/experiments/";
    Page out;
    const std::size_t cap = std::numeric_limits<std::int64_t>::max() - 1;
    const Json type = "Microsoft.BatchAI/workspaces/experiments";
    const Json group = ws.resource_group;
    std::string last;
    for (auto& row : experiment_summaries(cx_.store(), ws.id, page.after,
                                          static_cast<std::int64_t>(std::min(page.limit, cap)))) {
      if (out.items.size() == page.limit) {
        out.next = last;
        break;
      }
      last = row.name_lc;
      Json e = Json::object();
      e["creationTime"] = std::move(row.creation_time);
      e["id"] = prefix + row.name;
      e["name"] = std::move(row.name);
      e["provisioningState"] = std::move(row.provisioning_state);
      e["provisioningStateTransitionTime"] = std::move(row.provisioning_state_time);
      e["resourceGroup"] = group;
      e["type"] = type;
      out.items.push_back(std::move(e));
    }
    return out;
  });
}

void Experiments::remove(const WorkspaceRef& ref, const std::string& name) {
  cx_.store().write([&] {
    auto ws = require_workspace(cx_.store(), ref);
    const auto row = find_experiment(cx_.store(), ws.id, name);
    if (!row) experiment_not_found(name);
    const auto& [id, stored_name] = *row;
    ending_.end_jobs_under(JobEnding::Deleted::kExperiment, id, "experiment '" + stored_name + "' was deleted");
    delete_experiment(cx_.store(), id);
  });
}

}  // namespace batchai::control_plane
