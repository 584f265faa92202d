// `batchai experiment ...`.
#include "batchai/control_plane/experiments.hpp"

#include <algorithm>
#include <limits>

#include "batchai/common/ids.hpp"
#include "context.hpp"
#include "reconciler.hpp"
#include "jobs/job_ending.hpp"
#include "rows.hpp"
#include "store.hpp"

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
    auto st = cx_.store().prepare("SELECT doc FROM experiments WHERE workspace_id = ? AND name_lc = ?");
    st.bind(1, ws.id).bind(2, to_lower(name));
    if (st.step()) return parse_doc(st.text(0));
    Json doc = {{"creationTime", format_iso(now)},
                {"id", arm_id(subscription_id(), ws.resource_group, {{"workspaces", ws.name}, {"experiments", name}})},
                {"name", name},
                {"provisioningState", "succeeded"},
                {"provisioningStateTransitionTime", format_iso(now)},
                {"resourceGroup", ws.resource_group},
                {"type", "Microsoft.BatchAI/workspaces/experiments"}};
    cx_.store().prepare("INSERT INTO experiments(workspace_id, name_lc, name, doc) VALUES (?, ?, ?, ?)")
        .bind(1, ws.id).bind(2, to_lower(name)).bind(3, name).bind(4, dump_doc(doc)).run();
    return doc;
  });
}

Json Experiments::show(const WorkspaceRef& ref, const std::string& name) {
  reconciler_.reconcile();
  return cx_.store().read([&] {
    auto st = cx_.store().prepare(
        "SELECT e.doc FROM experiments e JOIN workspaces w ON w.id = e.workspace_id "
        "WHERE w.rg_lc = ? AND w.name_lc = ? AND e.name_lc = ?");
    st.bind(1, to_lower(ref.resource_group)).bind(2, to_lower(ref.workspace)).bind(3, to_lower(name));
    if (!st.step()) {
      require_workspace(cx_.store(), ref);
      experiment_not_found(name);
    }
    return parse_doc(st.text(0));
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
    auto st = cx_.store().prepare(
        "SELECT name, json_extract(doc, '$.creationTime'), json_extract(doc, '$.provisioningState'), "
        "json_extract(doc, '$.provisioningStateTransitionTime'), name_lc FROM experiments "
        "WHERE workspace_id = ? AND name_lc > ? ORDER BY name_lc LIMIT ?");
    const std::size_t cap = std::numeric_limits<std::int64_t>::max() - 1;
    st.bind(1, ws.id).bind(2, page.after).bind(3, static_cast<std::int64_t>(std::min(page.limit, cap)) + 1);
    const Json type = "Microsoft.BatchAI/workspaces/experiments";
    const Json group = ws.resource_group;
    std::string last;
    while (st.step()) {
      if (out.items.size() == page.limit) {
        out.next = last;
        break;
      }
      last = st.text(4);
      Json e = Json::object();
      std::string name = st.text(0);
      e["creationTime"] = st.text(1);
      e["id"] = prefix + name;
      e["name"] = std::move(name);
      e["provisioningState"] = st.text(2);
      e["provisioningStateTransitionTime"] = st.text(3);
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
    auto st = cx_.store().prepare("SELECT id, name FROM experiments WHERE workspace_id = ? AND name_lc = ?");
    st.bind(1, ws.id).bind(2, to_lower(name));
    if (!st.step()) experiment_not_found(name);
    std::int64_t id = st.integer(0);
    ending_.end_jobs_under(JobEnding::Deleted::kExperiment, id, "experiment '" + st.text(1) + "' was deleted");
    cx_.store().prepare("DELETE FROM experiments WHERE id = ?").bind(1, id).run();
  });
}

}  // namespace batchai::control_plane
