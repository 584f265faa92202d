#include "arm_routes.hpp"

#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"
#include "job_file_links.hpp"
#include "request_file.hpp"
#include "wire.hpp"

namespace batchai::serve {
namespace {

namespace cp = control_plane;

// The api-versions each provider is served at: what az 2.45 and the SDKs of its time send.
const std::vector<std::string> kSubscriptionVersions = {"2016-06-01", "2018-06-01", "2019-06-01", "2019-11-01",
                                                        "2020-01-01", "2021-01-01", "2022-12-01"};
const std::vector<std::string> kResourceVersions = {"2018-05-01", "2019-05-01", "2019-07-01", "2019-10-01",
                                                    "2020-06-01", "2020-10-01", "2021-01-01", "2021-04-01",
                                                    "2022-09-01"};
const std::vector<std::string> kStorageVersions = {"2019-06-01", "2021-04-01", "2021-06-01", "2021-08-01",
                                                   "2021-09-01", "2022-05-01", "2022-09-01"};
const std::vector<std::string> kBatchAiVersions = {"2018-05-01"};

constexpr const char* kResources = "Microsoft.Resources";
constexpr const char* kStorage = "Microsoft.Storage";
constexpr const char* kBatchAi = "Microsoft.BatchAI";

void not_served(Call& call) {
  call.error(404, "NotFound", "batchai serve has no operation at this path (see docs/serve.md for what is served).");
}

void method_not_allowed(Call& call) {
  call.error(405, "MethodNotAllowed", "The method " + call.method() + " is not served for this resource.");
}

bool is_get(const Call& call) { return call.method() == "GET" || call.method() == "HEAD"; }

Json subscription(const Identity& identity) {
  const std::string sub = subscription_id();
  return {{"id", "/subscriptions/" + sub},
          {"subscriptionId", sub},
          {"tenantId", identity.tenant_id},
          {"displayName", "batchai-local"},
          {"state", "Enabled"},
          {"subscriptionPolicies", {{"locationPlacementId", "Public_2014-09-01"}, {"quotaId", "Local"}, {"spendingLimit", "Off"}}},
          {"authorizationSource", "RoleBased"},
          {"managedByTenants", Json::array()}};
}

Json operations_list() {
  Json value = Json::array();
  for (const char* type : {"workspaces", "workspaces/experiments", "workspaces/experiments/jobs", "workspaces/clusters",
                           "workspaces/fileservers"})
    for (const char* verb : {"read", "write", "delete"})
      value.push_back({{"name", std::string(kBatchAi) + "/" + type + "/" + verb},
                       {"display", {{"provider", kBatchAi}, {"resource", type}, {"operation", verb}, {"description", ""}}},
                       {"origin", "user,system"}});
  return {{"value", value}};
}

std::optional<std::string> string_at(const Json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || object[key].is_null()) return std::nullopt;
  if (!object[key].is_string()) throw InvalidArgument(std::string("'") + key + "' must be a string.", "InvalidRequestContent");
  return object[key].get<std::string>();
}

// A body's "tags": nullopt when absent or null (the control plane checks the rest).
std::optional<Json> tags_at(const Json& body) {
  if (!body.contains("tags") || body["tags"].is_null()) return std::nullopt;
  return body["tags"];
}

// --- Microsoft.Resources ---------------------------------------------------------------------

void resource_group(Call& call, ArmContext& ctx, const std::string& name) {
  if (!check_api_version(call, kResourceVersions)) return;
  cp::Groups& groups = ctx.cp.groups();
  if (call.method() == "HEAD") return call.empty(groups.exists(name) ? 204 : 404);
  if (call.method() == "GET") return call.json(200, to_wire(groups.show(name)));
  if (call.method() == "PUT") {  // create-or-update: `az group update --tags` PUTs the group back
    const Json body = call.body_object();
    const bool existed = groups.exists(name);
    auto location = string_at(body, "location");
    if (!location) throw InvalidArgument("The location property is required for this definition.", "LocationRequired");
    return call.json(existed ? 200 : 201, to_wire(groups.create(name, *location, tags_at(body))));
  }
  if (call.method() == "PATCH") {  // the tags only; a body without them changes nothing
    const auto tags = tags_at(call.body_object());
    return call.json(200, to_wire(tags ? groups.update_tags(name, *tags) : groups.show(name)));
  }
  if (call.method() == "DELETE") {
    if (!groups.exists(name))
      throw NotFound("Resource group '" + name + "' could not be found.", "ResourceGroupNotFound");
    groups.remove(name);
    return ctx.operations.accepted(call, kResources, false);
  }
  method_not_allowed(call);
}

// --- Microsoft.Storage -----------------------------------------------------------------------

// An account's file and blob endpoints as this server serves them (docs/serve.md "The storage
// data plane"): https://ACCOUNT.file.core.localhost:PORT/, the suffix its az line registers.
Json served_account(const Call& call, Json doc) {
  const std::string port = call.base.substr(call.base.rfind(':'));
  auto endpoints = doc.find("primaryEndpoints");
  if (endpoints == doc.end() || !endpoints->is_object()) return doc;
  for (const char* service : {"file", "blob"}) {
    auto url = endpoints->find(service);
    if (url == endpoints->end() || !url->is_string()) continue;
    std::string text = url->get<std::string>();
    if (auto at = text.find(".core.windows.net/"); at != std::string::npos)
      *url = text.replace(at, 18, ".core.localhost" + port + "/");
  }
  return doc;
}

Json served_accounts(const Call& call, Json docs) {
  for (auto& doc : docs) doc = served_account(call, doc);
  return docs;
}

void storage(Call& call, ArmContext& ctx, const std::optional<std::string>& rg, std::size_t at) {
  if (!check_api_version(call, kStorageVersions)) return;
  cp::StorageAccounts& accounts = ctx.cp.storage_accounts();
  if (call.is({"storageaccounts"}, at)) {
    if (!is_get(call)) return method_not_allowed(call);
    return call.json(200, to_wire_list(served_accounts(call, accounts.list(rg))));
  }
  if (!rg) return not_served(call);
  if (call.is({"storageaccounts", "*", "listkeys"}, at)) {
    if (call.method() != "POST") return method_not_allowed(call);
    return call.json(200, {{"keys", accounts.keys(rg, call.segs[at + 1])}});
  }
  if (!call.is({"storageaccounts", "*"}, at)) return not_served(call);
  const std::string name = call.segs[at + 1];
  if (is_get(call)) return call.json(200, to_wire(served_account(call, accounts.show(rg, name))));
  if (call.method() == "PUT") {
    const Json body = call.body_object();
    const std::string sku = string_at(body.value("sku", Json::object()), "name").value_or("Standard_LRS");
    const std::string kind = string_at(body, "kind").value_or("StorageV2");
    try {
      accounts.create(*rg, name, string_at(body, "location"), sku, kind);
    } catch (const AlreadyExists&) {
      // ARM's PUT of an account this group already has is an update: answer it as it stands.
      return call.json(200, to_wire(served_account(call, accounts.show(rg, name))));
    }
    return ctx.operations.accepted(call, kStorage, true);
  }
  if (call.method() == "DELETE") {
    try {
      accounts.remove(rg, name);
    } catch (const NotFound&) {
      return call.empty(204);
    }
    return call.empty(200);
  }
  method_not_allowed(call);
}

// --- Microsoft.BatchAI -----------------------------------------------------------------------

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

// A BatchAI PUT creates as the CLI's --config-file does: the body in a private file (removed
// after), `o` naming it, then the accepted operation.
template <typename Options, typename Create>
void create_from_body(Call& call, ArmContext& ctx, Options o, Create&& create) {
  RequestFile file(ctx.request_dir, call.body_object());
  o.config_file = file.path().string();
  create(o);
  ctx.operations.accepted(call, kBatchAi, true);
}

void cluster(Call& call, ArmContext& ctx, const cp::WorkspaceRef& ws, const std::string& name) {
  cp::Clusters& clusters = ctx.cp.clusters();
  if (is_get(call)) return call.json(200, to_wire(clusters.show(ws, name)));
  if (call.method() == "PUT") {
    cp::ClusterCreateOptions o;
    o.where = ws;
    o.name = name;
    return create_from_body(call, ctx, o, [&](const auto& with_file) { clusters.create(with_file); });
  }
  if (call.method() == "PATCH") {  // ClusterUpdateParameters: the scale settings only; 200, not an LRO
    const Json body = call.body_object();
    const Json scale = body.value("properties", Json::object()).value("scaleSettings", Json::object());
    if (scale.is_object() && scale.contains("manual") && scale["manual"].is_object())
      return call.json(200, to_wire(clusters.resize(ws, name, scale_value(scale["manual"], "targetNodeCount",
                                                                          "scaleSettings.manual.targetNodeCount"))));
    if (scale.is_object() && scale.contains("autoScale") && scale["autoScale"].is_object())
      return call.json(200, to_wire(clusters.auto_scale(
                                ws, name,
                                scale_value(scale["autoScale"], "minimumNodeCount", "scaleSettings.autoScale.minimumNodeCount"),
                                scale_value(scale["autoScale"], "maximumNodeCount", "scaleSettings.autoScale.maximumNodeCount"))));
    return call.json(200, to_wire(clusters.show(ws, name)));
  }
  if (call.method() == "DELETE") return batchai_delete(call, ctx, [&] { clusters.remove(ws, name); });
  method_not_allowed(call);
}

void file_server(Call& call, ArmContext& ctx, const cp::WorkspaceRef& ws, const std::string& name) {
  cp::FileServers& servers = ctx.cp.file_servers();
  if (is_get(call)) return call.json(200, to_wire(servers.show(ws, name)));
  if (call.method() == "PUT") {
    cp::FileServerCreateOptions o;
    o.where = ws;
    o.name = name;
    return create_from_body(call, ctx, o, [&](const auto& with_file) { servers.create(with_file); });
  }
  if (call.method() == "DELETE") return batchai_delete(call, ctx, [&] { servers.remove(ws, name); });
  method_not_allowed(call);
}

void job(Call& call, ArmContext& ctx, const cp::JobRef& ref, std::size_t action_at) {
  cp::Jobs& jobs = ctx.cp.jobs();
  if (call.low.size() == action_at + 1) {  // an action on the job: POST only
    if (call.method() != "POST") return method_not_allowed(call);
    const std::string& action = call.low[action_at];
    if (action == "terminate") {
      jobs.terminate(ref);
      return ctx.operations.accepted(call, kBatchAi, false);
    }
    if (action == "listremotelogininformation") return call.json(200, {{"value", jobs.node_list(ref)}});
    if (action == "listoutputfiles") {
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
      for (Json entry : jobs.file_list(ref, directory_id, directory, expiry)) {
        if (entry["downloadUrl"].is_string())
          entry["downloadUrl"] = job_file_url(ctx.identity, call.base,
                                              {ref, directory_id, directory, entry["name"].get<std::string>(), expires});
        value.push_back(output_file_to_wire(entry));
      }
      return call.json(200, {{"value", value}});
    }
    return not_served(call);
  }
  if (is_get(call)) return call.json(200, to_wire(jobs.show(ref)));
  if (call.method() == "PUT") {
    cp::JobCreateOptions o;
    o.where = ref.where;
    o.experiment = ref.experiment;
    o.name = ref.name;
    return create_from_body(call, ctx, o, [&](const auto& with_file) { jobs.create(with_file); });
  }
  if (call.method() == "DELETE") return batchai_delete(call, ctx, [&] { jobs.remove(ref); });
  method_not_allowed(call);
}

// /subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.BatchAI/<from `at` on>
void batchai(Call& call, ArmContext& ctx, const std::string& rg, std::size_t at) {
  if (!check_api_version(call, kBatchAiVersions)) return;
  const auto& low = call.low;
  const auto& segs = call.segs;
  const std::size_t n = low.size() - at;
  if (n == 0 || low[at] != "workspaces") return not_served(call);
  if (n == 1) return is_get(call) ? call.json(200, to_wire_list(ctx.cp.workspaces().list(rg))) : method_not_allowed(call);
  const cp::WorkspaceRef ws{rg, segs[at + 1]};
  if (n == 2) {
    cp::Workspaces& workspaces = ctx.cp.workspaces();
    if (is_get(call)) return call.json(200, to_wire(workspaces.show(ws)));
    if (call.method() == "PUT") {
      const Json body = call.body_object();
      workspaces.create(rg, ws.workspace, string_at(body, "location"), tags_at(body));
      return ctx.operations.accepted(call, kBatchAi, true);
    }
    if (call.method() == "PATCH") {  // WorkspaceUpdateParameters: the tags; 200, not an LRO
      const auto tags = tags_at(call.body_object());
      return call.json(200, to_wire(tags ? workspaces.update_tags(ws, *tags) : workspaces.show(ws)));
    }
    if (call.method() == "DELETE") return batchai_delete(call, ctx, [&] { workspaces.remove(ws); });
    return method_not_allowed(call);
  }
  const std::string& kind = low[at + 2];
  if (n == 3) {
    if (!is_get(call)) return method_not_allowed(call);
    if (kind == "experiments") return call.json(200, to_wire_list(ctx.cp.experiments().list(ws)));
    if (kind == "clusters") return call.json(200, to_wire_list(ctx.cp.clusters().list(ws)));
    if (kind == "fileservers") return call.json(200, to_wire_list(ctx.cp.file_servers().list(ws)));
    return not_served(call);
  }
  const std::string& name = segs[at + 3];
  if (kind == "clusters") {
    if (n == 4) return cluster(call, ctx, ws, name);
    if (n == 5 && low[at + 4] == "listremotelogininformation")
      return call.method() == "POST" ? call.json(200, {{"value", ctx.cp.nodes().list(ws, name)}}) : method_not_allowed(call);
    return not_served(call);
  }
  if (kind == "fileservers") return n == 4 ? file_server(call, ctx, ws, name) : not_served(call);
  if (kind != "experiments") return not_served(call);
  if (n == 4) {
    cp::Experiments& experiments = ctx.cp.experiments();
    if (is_get(call)) return call.json(200, to_wire(experiments.show(ws, name)));
    if (call.method() == "PUT") {
      experiments.create(ws, name);
      return ctx.operations.accepted(call, kBatchAi, true);
    }
    if (call.method() == "DELETE") return batchai_delete(call, ctx, [&] { experiments.remove(ws, name); });
    return method_not_allowed(call);
  }
  if (low[at + 4] != "jobs") return not_served(call);
  if (n == 5) return is_get(call) ? call.json(200, to_wire_list(ctx.cp.jobs().list(ws, name))) : method_not_allowed(call);
  if (n == 6 || n == 7) return job(call, ctx, cp::JobRef{ws, name, segs[at + 5]}, at + 6);
  not_served(call);
}

// /subscriptions/{sub}/providers/...
void subscription_providers(Call& call, ArmContext& ctx) {
  const auto& low = call.low;
  if (low.size() == 8 && low[4] == "locations" && (low[6] == "operationstatuses" || low[6] == "operationresults")) {
    if (!is_get(call)) return method_not_allowed(call);
    const auto& versions = low[3] == "microsoft.batchai"   ? kBatchAiVersions
                           : low[3] == "microsoft.storage" ? kStorageVersions
                                                           : kResourceVersions;
    if (!check_api_version(call, versions)) return;
    return ctx.operations.poll(call, low[6] == "operationstatuses", call.segs[7]);
  }
  if (low.size() >= 5 && low[3] == "microsoft.storage") return storage(call, ctx, std::nullopt, 4);
  if (low.size() >= 5 && low[3] == "microsoft.batchai") {
    if (!check_api_version(call, kBatchAiVersions)) return;
    if (!is_get(call)) return method_not_allowed(call);
    if (call.is({"workspaces"}, 4)) return call.json(200, to_wire_list(ctx.cp.workspaces().list(std::nullopt)));
    if (call.is({"locations", "*", "usages"}, 4))
      return call.json(200, {{"value", ctx.cp.clusters().list_usages(call.segs[5])}});
  }
  not_served(call);
}

}  // namespace

void handle_arm(Call& call, ArmContext& ctx) {
  const auto& low = call.low;
  if (call.is({"subscriptions"}) || call.is({"tenants"})) {
    if (!check_api_version(call, kSubscriptionVersions)) return;
    if (!is_get(call)) return method_not_allowed(call);
    if (low[0] == "subscriptions") return call.json(200, {{"value", {subscription(ctx.identity)}}});
    return call.json(200, {{"value",
                            {{{"id", "/tenants/" + ctx.identity.tenant_id},
                              {"tenantId", ctx.identity.tenant_id},
                              {"tenantCategory", "Home"},
                              {"displayName", "batchai-local"},
                              {"domains", {"localhost"}}}}}});
  }
  if (call.is({"providers", "microsoft.batchai", "operations"})) {
    if (!check_api_version(call, kBatchAiVersions)) return;
    return is_get(call) ? call.json(200, operations_list()) : method_not_allowed(call);
  }
  if (low.size() < 2 || low[0] != "subscriptions") return not_served(call);
  if (!iequals(call.segs[1], subscription_id()))
    return call.error(404, "SubscriptionNotFound", "The subscription was not found: this server has only " +
                                                       subscription_id() + ".");
  if (low.size() == 2) {
    if (!check_api_version(call, kSubscriptionVersions)) return;
    return is_get(call) ? call.json(200, subscription(ctx.identity)) : method_not_allowed(call);
  }
  if (low[2] == "providers" && low.size() >= 4) return subscription_providers(call, ctx);
  if (low[2] != "resourcegroups") return not_served(call);
  if (low.size() == 3) {
    if (!check_api_version(call, kResourceVersions)) return;
    return is_get(call) ? call.json(200, to_wire_list(ctx.cp.groups().list())) : method_not_allowed(call);
  }
  const std::string& rg = call.segs[3];
  if (low.size() == 4) return resource_group(call, ctx, rg);
  if (low.size() >= 7 && low[4] == "providers" && low[5] == "microsoft.storage") return storage(call, ctx, rg, 6);
  if (low.size() >= 7 && low[4] == "providers" && low[5] == "microsoft.batchai") return batchai(call, ctx, rg, 6);
  not_served(call);
}

}  // namespace batchai::serve
