// The Microsoft.BatchAI 2018-05-01 handlers of the ARM route table (arm_handlers.hpp):
// workspaces, experiments, jobs, clusters, file servers, usages and operations, each answered
// from the control plane's services; lists a page at a time (arm_paging.hpp).
#include <ctime>
#include <string>

#include "arm/arm_handlers.hpp"
#include "arm/arm_paging.hpp"
#include "batchai/common/errors.hpp"
#include "job_files/job_file_links.hpp"
#include "arm/wire.hpp"

namespace batchai::serve::arm {
namespace {

namespace cp = control_plane;

cp::WorkspaceRef workspace_of(const RouteArgs& a) { return {a["resourceGroupName"], a["workspaceName"]}; }
cp::JobRef job_of(const RouteArgs& a) { return {workspace_of(a), a["experimentName"], a["jobName"]}; }

// DELETE of a Batch AI resource: 202 + operation, 204 when it was not there (as ARM).
template <typename Remove>
void batchai_delete(Call& call, ArmContext& ctx, Remove remove) {
  try {
    remove();
  } catch (const NotFound&) {
    return call.empty(204);
  }
  ctx.operations.accepted(call, kBatchAi, true);
}

int scale_value(const Json& object, const char* key, const std::string& field) {
  if (!object.is_object() || !object.contains(key)) throw InvalidArgument(field + " is required.", "InvalidRequestContent");
  return static_cast<int>(checked_integer(object[key], field, 0, 100000));
}

// A BatchAI PUT creates from its body, the document the CLI reads from --config-file; then the
// accepted operation.
template <typename Options, typename Create>
void create_from_body(Call& call, ArmContext& ctx, Options o, Create&& create) {
  o.config = call.body_object();
  create(o);
  ctx.operations.accepted(call, kBatchAi, true);
}

// A list handler: the page `call` asks for, read by `list_page`, answered with its nextLink.
template <typename ListPage>
void answer_page(Call& call, ListPage&& list_page) {
  const cp::PageRequest asked = page_request(call);
  call.json(200, paged_answer(call, asked, list_page(asked)));
}

}  // namespace

void operations_list(Call& call, ArmContext&, const RouteArgs&) {
  Json value = Json::array();
  for (const char* type : {"workspaces", "workspaces/experiments", "workspaces/experiments/jobs", "workspaces/clusters",
                           "workspaces/fileservers"})
    for (const char* verb : {"read", "write", "delete"})
      value.push_back({{"name", std::string(kBatchAi) + "/" + type + "/" + verb},
                       {"display", {{"provider", kBatchAi}, {"resource", type}, {"operation", verb}, {"description", ""}}},
                       {"origin", "user,system"}});
  call.json(200, {{"value", value}});
}

void usages_list(Call& call, ArmContext& ctx, const RouteArgs& a) {
  call.json(200, {{"value", ctx.cp.clusters().list_usages(a["location"])}});
}

// --- workspaces ------------------------------------------------------------------------------

void workspaces_list_all(Call& call, ArmContext& ctx, const RouteArgs&) {
  answer_page(call, [&](const cp::PageRequest& p) { return ctx.cp.workspaces().list_page(std::nullopt, p); });
}
void workspaces_list(Call& call, ArmContext& ctx, const RouteArgs& a) {
  answer_page(call, [&](const cp::PageRequest& p) { return ctx.cp.workspaces().list_page(a["resourceGroupName"], p); });
}
void workspace_get(Call& call, ArmContext& ctx, const RouteArgs& a) {
  call.json(200, to_wire(ctx.cp.workspaces().show(workspace_of(a))));
}
void workspace_put(Call& call, ArmContext& ctx, const RouteArgs& a) {
  const Json body = call.body_object();
  ctx.cp.workspaces().create(a["resourceGroupName"], a["workspaceName"], string_at(body, "location"), tags_at(body));
  ctx.operations.accepted(call, kBatchAi, true);
}
// WorkspaceUpdateParameters: the tags; 200, not an LRO
void workspace_patch(Call& call, ArmContext& ctx, const RouteArgs& a) {
  const auto tags = tags_at(call.body_object());
  const cp::WorkspaceRef ws = workspace_of(a);
  call.json(200, to_wire(tags ? ctx.cp.workspaces().update_tags(ws, *tags) : ctx.cp.workspaces().show(ws)));
}
void workspace_delete(Call& call, ArmContext& ctx, const RouteArgs& a) {
  batchai_delete(call, ctx, [&] { ctx.cp.workspaces().remove(workspace_of(a)); });
}

// --- experiments -----------------------------------------------------------------------------

void experiments_list(Call& call, ArmContext& ctx, const RouteArgs& a) {
  answer_page(call, [&](const cp::PageRequest& p) { return ctx.cp.experiments().list_page(workspace_of(a), p); });
}
void experiment_get(Call& call, ArmContext& ctx, const RouteArgs& a) {
  call.json(200, to_wire(ctx.cp.experiments().show(workspace_of(a), a["experimentName"])));
}
void experiment_put(Call& call, ArmContext& ctx, const RouteArgs& a) {
  ctx.cp.experiments().create(workspace_of(a), a["experimentName"]);
  ctx.operations.accepted(call, kBatchAi, true);
}
void experiment_delete(Call& call, ArmContext& ctx, const RouteArgs& a) {
  batchai_delete(call, ctx, [&] { ctx.cp.experiments().remove(workspace_of(a), a["experimentName"]); });
}

// --- jobs ------------------------------------------------------------------------------------

// Joined from each job's cached wire text (wire_cache.hpp): a page of 1,000 jobs is ~3 MB of
// JSON that would otherwise be parsed, rebuilt and dumped on every request.
void jobs_list(Call& call, ArmContext& ctx, const RouteArgs& a) {
  const cp::PageRequest asked = page_request(call);
  const cp::TextPage page = ctx.cp.jobs().list_page_text(workspace_of(a), a["experimentName"], asked);
  call.json_text(200, paged_text(call, asked, page, ctx.job_wire));
}
void job_get(Call& call, ArmContext& ctx, const RouteArgs& a) {
  call.json(200, to_wire(ctx.cp.jobs().show(job_of(a))));
}
void job_put(Call& call, ArmContext& ctx, const RouteArgs& a) {
  const cp::JobRef ref = job_of(a);
  cp::JobCreateOptions o;
  o.where = ref.where;
  o.experiment = ref.experiment;
  o.name = ref.name;
  create_from_body(call, ctx, o, [&](const auto& with_file) { ctx.cp.jobs().create(with_file); });
}
void job_delete(Call& call, ArmContext& ctx, const RouteArgs& a) {
  batchai_delete(call, ctx, [&] { ctx.cp.jobs().remove(job_of(a)); });
}
void job_terminate(Call& call, ArmContext& ctx, const RouteArgs& a) {
  ctx.cp.jobs().terminate(job_of(a));
  ctx.operations.accepted(call, kBatchAi, false);
}
void job_remote_logins(Call& call, ArmContext& ctx, const RouteArgs& a) {
  call.json(200, {{"value", ctx.cp.jobs().node_list(job_of(a))}});
}
void job_output_files(Call& call, ArmContext& ctx, const RouteArgs& a) {
  const cp::JobRef ref = job_of(a);
  const std::string directory_id = call.query("outputdirectoryid");
  if (directory_id.empty())
    throw InvalidArgument("The query parameter 'outputdirectoryid' is required.", "MissingRequiredQueryParameter");
  const std::string directory = call.has_query("directory") ? call.query("directory") : ".";
  int expiry = 60;
  if (call.has_query("linkexpiryinminutes"))
    expiry = static_cast<int>(checked_integer(parse_json_text(call.query("linkexpiryinminutes"), "linkexpiryinminutes"),
                                              "linkexpiryinminutes", 5, 600));
  // The control plane's file:// URLs become links on this server (job_file_links.hpp).
  const std::int64_t expires = static_cast<std::int64_t>(std::time(nullptr)) + std::int64_t{expiry} * 60;
  Json value = Json::array();
  for (Json entry : ctx.cp.jobs().file_list(ref, directory_id, directory, expiry)) {
    if (entry["downloadUrl"].is_string())
      entry["downloadUrl"] =
          job_file_url(ctx.identity, call.base, {ref, directory_id, directory, entry["name"].get<std::string>(), expires});
    value.push_back(output_file_to_wire(std::move(entry)));
  }
  call.json(200, {{"value", value}});
}

// --- clusters --------------------------------------------------------------------------------

void clusters_list(Call& call, ArmContext& ctx, const RouteArgs& a) {
  answer_page(call, [&](const cp::PageRequest& p) { return ctx.cp.clusters().list_page(workspace_of(a), p); });
}
void cluster_get(Call& call, ArmContext& ctx, const RouteArgs& a) {
  call.json(200, to_wire(ctx.cp.clusters().show(workspace_of(a), a["clusterName"])));
}
void cluster_put(Call& call, ArmContext& ctx, const RouteArgs& a) {
  cp::ClusterCreateOptions o;
  o.where = workspace_of(a);
  o.name = a["clusterName"];
  create_from_body(call, ctx, o, [&](const auto& with_file) { ctx.cp.clusters().create(with_file); });
}
// ClusterUpdateParameters: the scale settings only; 200, not an LRO
void cluster_patch(Call& call, ArmContext& ctx, const RouteArgs& a) {
  cp::Clusters& clusters = ctx.cp.clusters();
  const cp::WorkspaceRef ws = workspace_of(a);
  const std::string& name = a["clusterName"];
  const Json body = call.body_object();
  const Json scale = body.value("properties", Json::object()).value("scaleSettings", Json::object());
  if (scale.is_object() && scale.contains("manual") && scale["manual"].is_object())
    return call.json(200, to_wire(clusters.resize(
                              ws, name, scale_value(scale["manual"], "targetNodeCount", "scaleSettings.manual.targetNodeCount"))));
  if (scale.is_object() && scale.contains("autoScale") && scale["autoScale"].is_object())
    return call.json(200, to_wire(clusters.auto_scale(
                              ws, name,
                              scale_value(scale["autoScale"], "minimumNodeCount", "scaleSettings.autoScale.minimumNodeCount"),
                              scale_value(scale["autoScale"], "maximumNodeCount", "scaleSettings.autoScale.maximumNodeCount"))));
  call.json(200, to_wire(clusters.show(ws, name)));
}
void cluster_delete(Call& call, ArmContext& ctx, const RouteArgs& a) {
  batchai_delete(call, ctx, [&] { ctx.cp.clusters().remove(workspace_of(a), a["clusterName"]); });
}
void cluster_remote_logins(Call& call, ArmContext& ctx, const RouteArgs& a) {
  call.json(200, {{"value", ctx.cp.nodes().list(workspace_of(a), a["clusterName"])}});
}

// --- file servers ----------------------------------------------------------------------------

void file_servers_list(Call& call, ArmContext& ctx, const RouteArgs& a) {
  answer_page(call, [&](const cp::PageRequest& p) { return ctx.cp.file_servers().list_page(workspace_of(a), p); });
}
void file_server_get(Call& call, ArmContext& ctx, const RouteArgs& a) {
  call.json(200, to_wire(ctx.cp.file_servers().show(workspace_of(a), a["fileServerName"])));
}
void file_server_put(Call& call, ArmContext& ctx, const RouteArgs& a) {
  cp::FileServerCreateOptions o;
  o.where = workspace_of(a);
  o.name = a["fileServerName"];
  create_from_body(call, ctx, o, [&](const auto& with_file) { ctx.cp.file_servers().create(with_file); });
}
void file_server_delete(Call& call, ArmContext& ctx, const RouteArgs& a) {
  batchai_delete(call, ctx, [&] { ctx.cp.file_servers().remove(workspace_of(a), a["fileServerName"]); });
}

}  // namespace batchai::serve::arm
