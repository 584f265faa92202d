// `batchai workspace ...` and `batchai experiment ...`.
#include "batchai/common/ids.hpp"
#include "batchai/control_plane/control_plane.hpp"
#include "batchai/control_plane/jobs.hpp"
#include "store.hpp"
#include "internal.hpp"

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

[[noreturn]] void experiment_not_found(const std::string& name) {
  throw NotFound("The specified experiment " + name + " is not found", "ExperimentNotFound");
}

}  // namespace

// ---- workspaces ----

Json ControlPlane::workspace_create(const std::string& resource_group, const std::string& name,
                                    const std::optional<std::string>& location) {
  validate_group_parameter(resource_group);
  validate_resource_name(name, "workspace_name");
  const auto now = clock_->now();
  return store_->write([&] {
    auto group = require_group(*store_, resource_group);
    auto st = store_->prepare("SELECT doc FROM workspaces WHERE rg_lc = ? AND name_lc = ?");
    st.bind(1, to_lower(resource_group)).bind(2, to_lower(name));
    if (st.step()) return parse_doc(st.text(0));  // create-or-update PUT: returns the existing one
    std::string loc = location && !location->empty() ? to_lower(*location) : group.location;
    Json doc = {{"creationTime", format_iso(now)},
                {"id", arm_id(subscription_id(), group.name, {{"workspaces", name}})},
                {"location", loc},
                {"name", name},
                {"provisioningState", "succeeded"},
                {"provisioningStateTransitionTime", format_iso(now)},
                {"resourceGroup", group.name},
                {"tags", nullptr},
                {"type", "Microsoft.BatchAI/workspaces"}};
    store_->prepare("INSERT INTO workspaces(rg_lc, name_lc, name, location, doc) VALUES (?, ?, ?, ?, ?)")
        .bind(1, to_lower(resource_group)).bind(2, to_lower(name)).bind(3, name).bind(4, loc).bind(5, dump_doc(doc))
        .run();
    return doc;
  });
}

Json ControlPlane::workspace_show(const WorkspaceRef& ref) {
  reconcile();
  return store_->read([&] {
    auto st = store_->prepare("SELECT doc FROM workspaces WHERE rg_lc = ? AND name_lc = ?");
    st.bind(1, to_lower(ref.resource_group)).bind(2, to_lower(ref.workspace));
    if (!st.step()) throw NotFound("The specified workspace " + ref.workspace + " is not found", "WorkspaceNotFound");
    return parse_doc(st.text(0));
  });
}

Json ControlPlane::workspace_list(const std::optional<std::string>& resource_group) {
  reconcile();
  return store_->read([&] {
    if (resource_group) require_group(*store_, *resource_group);
    Json out = Json::array();
    auto st = store_->prepare("SELECT doc FROM workspaces WHERE ?1 IS NULL OR rg_lc = ?1 ORDER BY rg_lc, name_lc");
    st.bind(1, resource_group ? std::optional<std::string>(to_lower(*resource_group)) : std::nullopt);
    while (st.step()) out.push_back(parse_doc(st.text(0)));
    return out;
  });
}

void ControlPlane::workspace_delete(const WorkspaceRef& ref) {
  store_->write([&] {
    auto ws = require_workspace(*store_, ref);
    end_jobs_of_workspace(ws.id, ws.name, "");
    trash(*store_, layout_.workspace_clusters(ws.resource_group, ws.name));
    trash(*store_, layout_.workspace_file_servers(ws.resource_group, ws.name));
    // Clusters (and their nodes), file servers and experiments go by ON DELETE CASCADE.
    store_->prepare("DELETE FROM workspaces WHERE id = ?").bind(1, ws.id).run();
  });
  empty_trash();
}

// ---- experiments ----

Json ControlPlane::experiment_create(const WorkspaceRef& ref, const std::string& name) {
  validate_resource_name(name, "experiment_name");
  const auto now = clock_->now();
  return store_->write([&] {
    auto ws = require_workspace(*store_, ref);
    auto st = store_->prepare("SELECT doc FROM experiments WHERE workspace_id = ? AND name_lc = ?");
    st.bind(1, ws.id).bind(2, to_lower(name));
    if (st.step()) return parse_doc(st.text(0));
    Json doc = {{"creationTime", format_iso(now)},
                {"id", arm_id(subscription_id(), ws.resource_group, {{"workspaces", ws.name}, {"experiments", name}})},
                {"name", name},
                {"provisioningState", "succeeded"},
                {"provisioningStateTransitionTime", format_iso(now)},
                {"resourceGroup", ws.resource_group},
                {"type", "Microsoft.BatchAI/workspaces/experiments"}};
    store_->prepare("INSERT INTO experiments(workspace_id, name_lc, name, doc) VALUES (?, ?, ?, ?)")
        .bind(1, ws.id).bind(2, to_lower(name)).bind(3, name).bind(4, dump_doc(doc)).run();
    return doc;
  });
}

Json ControlPlane::experiment_show(const WorkspaceRef& ref, const std::string& name) {
  reconcile();
  return store_->read([&] {
    auto st = store_->prepare(
        "SELECT e.doc FROM experiments e JOIN workspaces w ON w.id = e.workspace_id "
        "WHERE w.rg_lc = ? AND w.name_lc = ? AND e.name_lc = ?");
    st.bind(1, to_lower(ref.resource_group)).bind(2, to_lower(ref.workspace)).bind(3, to_lower(name));
    if (!st.step()) {
      require_workspace(*store_, ref);
      experiment_not_found(name);
    }
    return parse_doc(st.text(0));
  });
}

Json ControlPlane::experiment_list(const WorkspaceRef& ref) {
  reconcile();
  return store_->read([&] {
    auto ws = require_workspace(*store_, ref);
    // Hot path (10,000 experiments): one indexed query; the documents are rebuilt from a few
    // fields (SQLite's JSON reader is much faster than parsing every document here).
    const std::string prefix = arm_id(subscription_id(), ws.resource_group, {{"workspaces", ws.name}}) + "/experiments/";
    Json out = Json::array();
    auto st = store_->prepare(
        "SELECT name, json_extract(doc, '$.creationTime'), json_extract(doc, '$.provisioningState'), "
        "json_extract(doc, '$.provisioningStateTransitionTime') FROM experiments WHERE workspace_id = ? "
        "ORDER BY name_lc");
    st.bind(1, ws.id);
    const Json type = "Microsoft.BatchAI/workspaces/experiments";
    const Json group = ws.resource_group;
    while (st.step()) {
      Json e = Json::object();
      std::string name = st.text(0);
      e["creationTime"] = st.text(1);
      e["id"] = prefix + name;
      e["name"] = std::move(name);
      e["provisioningState"] = st.text(2);
      e["provisioningStateTransitionTime"] = st.text(3);
      e["resourceGroup"] = group;
      e["type"] = type;
      out.push_back(std::move(e));
    }
    return out;
  });
}

void ControlPlane::experiment_delete(const WorkspaceRef& ref, const std::string& name) {
  store_->write([&] {
    auto ws = require_workspace(*store_, ref);
    auto st = store_->prepare("SELECT id, name FROM experiments WHERE workspace_id = ? AND name_lc = ?");
    st.bind(1, ws.id).bind(2, to_lower(name));
    if (!st.step()) experiment_not_found(name);
    std::int64_t id = st.integer(0);
    jobs_->end_jobs_under(Jobs::Deleted::kExperiment, id, "experiment '" + st.text(1) + "' was deleted");
    store_->prepare("DELETE FROM experiments WHERE id = ?").bind(1, id).run();
  });
}

}  // namespace batchai::control_plane
