#include "arm/arm_routes.hpp"

#include <optional>
#include <string>
#include <vector>

#include "arm/arm_handlers.hpp"
#include "arm/arm_paging.hpp"
#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"
#include "arm/wire.hpp"

namespace batchai::serve {
namespace arm {

namespace cp = control_plane;

std::optional<std::string> string_at(const Json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || object[key].is_null()) return std::nullopt;
  if (!object[key].is_string()) throw InvalidArgument(std::string("'") + key + "' must be a string.", "InvalidRequestContent");
  return object[key].get<std::string>();
}

std::optional<Json> tags_at(const Json& body) {
  if (!body.contains("tags") || body["tags"].is_null()) return std::nullopt;
  return body["tags"];
}

namespace {

// The api-versions each provider is served at: what az 2.45 and the SDKs of its time send.
const std::vector<std::string> kSubscriptionVersions = {"2016-06-01", "2018-06-01", "2019-06-01", "2019-11-01",
                                                        "2020-01-01", "2021-01-01", "2022-12-01"};
const std::vector<std::string> kResourceVersions = {"2018-05-01", "2019-05-01", "2019-07-01", "2019-10-01",
                                                    "2020-06-01", "2020-10-01", "2021-01-01", "2021-04-01",
                                                    "2022-09-01"};
const std::vector<std::string> kStorageVersions = {"2019-06-01", "2021-04-01", "2021-06-01", "2021-08-01",
                                                   "2021-09-01", "2022-05-01", "2022-09-01"};
const std::vector<std::string> kBatchAiVersions = {"2018-05-01"};

// --- subscriptions ---------------------------------------------------------------------------

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

void subscriptions_list(Call& call, ArmContext& ctx, const RouteArgs&) {
  call.json(200, {{"value", {subscription(ctx.identity)}}});
}
void subscription_get(Call& call, ArmContext& ctx, const RouteArgs&) { call.json(200, subscription(ctx.identity)); }
void tenants_list(Call& call, ArmContext& ctx, const RouteArgs&) {
  call.json(200, {{"value",
                   {{{"id", "/tenants/" + ctx.identity.tenant_id},
                     {"tenantId", ctx.identity.tenant_id},
                     {"tenantCategory", "Home"},
                     {"displayName", "batchai-local"},
                     {"domains", {"localhost"}}}}}});
}

// GET …/providers/{provider}/locations/{location}/operationStatuses|operationResults/{operationId}
void operation_status(Call& call, ArmContext& ctx, const RouteArgs& a) {
  ctx.operations.poll(call, true, a["operationId"]);
}
void operation_result(Call& call, ArmContext& ctx, const RouteArgs& a) {
  ctx.operations.poll(call, false, a["operationId"]);
}

// --- Microsoft.Resources ---------------------------------------------------------------------

void groups_list(Call& call, ArmContext& ctx, const RouteArgs&) {
  const auto asked = page_request(call);
  call.json(200, paged_answer(call, asked, ctx.cp.groups().list_page(asked)));
}
void group_head(Call& call, ArmContext& ctx, const RouteArgs& a) {
  call.empty(ctx.cp.groups().exists(a["resourceGroupName"]) ? 204 : 404);
}
void group_get(Call& call, ArmContext& ctx, const RouteArgs& a) {
  call.json(200, to_wire(ctx.cp.groups().show(a["resourceGroupName"])));
}
// create-or-update: `az group update --tags` PUTs the group back
void group_put(Call& call, ArmContext& ctx, const RouteArgs& a) {
  const std::string& name = a["resourceGroupName"];
  const Json body = call.body_object();
  const bool existed = ctx.cp.groups().exists(name);
  auto location = string_at(body, "location");
  if (!location) throw InvalidArgument("The location property is required for this definition.", "LocationRequired");
  call.json(existed ? 200 : 201, to_wire(ctx.cp.groups().create(name, *location, tags_at(body))));
}
// the tags only; a body without them changes nothing
void group_patch(Call& call, ArmContext& ctx, const RouteArgs& a) {
  const std::string& name = a["resourceGroupName"];
  const auto tags = tags_at(call.body_object());
  call.json(200, to_wire(tags ? ctx.cp.groups().update_tags(name, *tags) : ctx.cp.groups().show(name)));
}
void group_delete(Call& call, ArmContext& ctx, const RouteArgs& a) {
  const std::string& name = a["resourceGroupName"];
  if (!ctx.cp.groups().exists(name))
    throw NotFound("Resource group '" + name + "' could not be found.", "ResourceGroupNotFound");
  ctx.cp.groups().remove(name);
  ctx.operations.accepted(call, kResources, false);
}

// --- Microsoft.Storage -----------------------------------------------------------------------

// An account's file and blob endpoints as this server serves them (docs/serve.md "The storage
// data plane"): https://ACCOUNT.file.core.localhost:PORT/, the suffix its az line registers.
Json served_account(const Call& call, Json doc) {
  const std::string port = call.base.substr(call.base.rfind(':'));
  if (!doc.is_object() || !doc.contains("primaryEndpoints") || !doc["primaryEndpoints"].is_object()) return doc;
  Json& endpoints = doc["primaryEndpoints"];
  for (const char* service : {"file", "blob"}) {
    if (!endpoints.contains(service) || !endpoints[service].is_string()) continue;
    std::string text = endpoints[service].get<std::string>();
    if (auto at = text.find(".core.windows.net/"); at != std::string::npos)
      endpoints[service] = text.replace(at, 18, ".core.localhost" + port + "/");
  }
  return doc;
}

void accounts_page(Call& call, ArmContext& ctx, const std::optional<std::string>& rg) {
  const auto asked = page_request(call);
  cp::Page page = ctx.cp.storage_accounts().list_page(rg, asked);
  for (auto& doc : page.items) doc = served_account(call, std::move(doc));
  call.json(200, paged_answer(call, asked, std::move(page)));
}

void accounts_list_all(Call& call, ArmContext& ctx, const RouteArgs&) { accounts_page(call, ctx, std::nullopt); }
void accounts_list(Call& call, ArmContext& ctx, const RouteArgs& a) {
  accounts_page(call, ctx, a["resourceGroupName"]);
}
void account_keys(Call& call, ArmContext& ctx, const RouteArgs& a) {
  call.json(200, {{"keys", ctx.cp.storage_accounts().keys(a["resourceGroupName"], a["accountName"])}});
}
void account_get(Call& call, ArmContext& ctx, const RouteArgs& a) {
  call.json(200, to_wire(served_account(call, ctx.cp.storage_accounts().show(a["resourceGroupName"], a["accountName"]))));
}
void account_put(Call& call, ArmContext& ctx, const RouteArgs& a) {
  const std::string &rg = a["resourceGroupName"], &name = a["accountName"];
  const Json body = call.body_object();
  const std::string sku = string_at(body.value("sku", Json::object()), "name").value_or("Standard_LRS");
  const std::string kind = string_at(body, "kind").value_or("StorageV2");
  try {
    ctx.cp.storage_accounts().create(rg, name, string_at(body, "location"), sku, kind);
  } catch (const AlreadyExists&) {
    // ARM's PUT of an account this group already has is an update: answer it as it stands.
    return call.json(200, to_wire(served_account(call, ctx.cp.storage_accounts().show(rg, name))));
  }
  ctx.operations.accepted(call, kStorage, true);
}
void account_delete(Call& call, ArmContext& ctx, const RouteArgs& a) {
  try {
    ctx.cp.storage_accounts().remove(a["resourceGroupName"], a["accountName"]);
  } catch (const NotFound&) {
    return call.empty(204);
  }
  call.empty(200);
}

using V = ApiVersions;
constexpr const char* kSub = "/subscriptions/{subscriptionId}";
#define RG "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}"
#define SA RG "/providers/Microsoft.Storage/storageAccounts/{accountName}"
#define WS RG "/providers/Microsoft.BatchAI/workspaces/{workspaceName}"
#define JOB WS "/experiments/{experimentName}/jobs/{jobName}"
#define OPS "/subscriptions/{subscriptionId}/providers/{provider}/locations/{location}"

// Every ARM operation served, in docs/serve.md's order ("Routes"); the first row that matches wins.
const ArmRoute kRoutes[] = {
    {"GET", "/subscriptions", V::kSubscription, subscriptions_list},
    {"GET", kSub, V::kSubscription, subscription_get},
    {"GET", "/tenants", V::kSubscription, tenants_list},
    {"GET", OPS "/operationStatuses/{operationId}", V::kByProvider, operation_status},
    {"GET", OPS "/operationResults/{operationId}", V::kByProvider, operation_result},
    {"GET", "/subscriptions/{subscriptionId}/resourceGroups", V::kResource, groups_list},
    {"HEAD", RG, V::kResource, group_head},
    {"GET", RG, V::kResource, group_get},
    {"PUT", RG, V::kResource, group_put},
    {"PATCH", RG, V::kResource, group_patch},
    {"DELETE", RG, V::kResource, group_delete},
    {"GET", "/subscriptions/{subscriptionId}/providers/Microsoft.Storage/storageAccounts", V::kStorage, accounts_list_all},
    {"GET", RG "/providers/Microsoft.Storage/storageAccounts", V::kStorage, accounts_list},
    {"GET", SA, V::kStorage, account_get},
    {"PUT", SA, V::kStorage, account_put},
    {"DELETE", SA, V::kStorage, account_delete},
    {"POST", SA "/listKeys", V::kStorage, account_keys},
    {"GET", "/providers/Microsoft.BatchAI/operations", V::kBatchAi, arm::operations_list},
    {"GET", "/subscriptions/{subscriptionId}/providers/Microsoft.BatchAI/locations/{location}/usages", V::kBatchAi,
     arm::usages_list},
    {"GET", "/subscriptions/{subscriptionId}/providers/Microsoft.BatchAI/workspaces", V::kBatchAi, arm::workspaces_list_all},
    {"GET", RG "/providers/Microsoft.BatchAI/workspaces", V::kBatchAi, arm::workspaces_list},
    {"GET", WS, V::kBatchAi, arm::workspace_get},
    {"PUT", WS, V::kBatchAi, arm::workspace_put},
    {"PATCH", WS, V::kBatchAi, arm::workspace_patch},
    {"DELETE", WS, V::kBatchAi, arm::workspace_delete},
    {"GET", WS "/experiments", V::kBatchAi, arm::experiments_list},
    {"GET", WS "/experiments/{experimentName}", V::kBatchAi, arm::experiment_get},
    {"PUT", WS "/experiments/{experimentName}", V::kBatchAi, arm::experiment_put},
    {"DELETE", WS "/experiments/{experimentName}", V::kBatchAi, arm::experiment_delete},
    {"GET", WS "/experiments/{experimentName}/jobs", V::kBatchAi, arm::jobs_list},
    {"GET", JOB, V::kBatchAi, arm::job_get},
    {"PUT", JOB, V::kBatchAi, arm::job_put},
    {"DELETE", JOB, V::kBatchAi, arm::job_delete},
    {"POST", JOB "/terminate", V::kBatchAi, arm::job_terminate},
    {"POST", JOB "/listRemoteLoginInformation", V::kBatchAi, arm::job_remote_logins},
    {"POST", JOB "/listOutputFiles", V::kBatchAi, arm::job_output_files},
    {"GET", WS "/clusters", V::kBatchAi, arm::clusters_list},
    {"GET", WS "/clusters/{clusterName}", V::kBatchAi, arm::cluster_get},
    {"PUT", WS "/clusters/{clusterName}", V::kBatchAi, arm::cluster_put},
    {"PATCH", WS "/clusters/{clusterName}", V::kBatchAi, arm::cluster_patch},
    {"DELETE", WS "/clusters/{clusterName}", V::kBatchAi, arm::cluster_delete},
    {"POST", WS "/clusters/{clusterName}/listRemoteLoginInformation", V::kBatchAi, arm::cluster_remote_logins},
    {"GET", WS "/fileServers", V::kBatchAi, arm::file_servers_list},
    {"GET", WS "/fileServers/{fileServerName}", V::kBatchAi, arm::file_server_get},
    {"PUT", WS "/fileServers/{fileServerName}", V::kBatchAi, arm::file_server_put},
    {"DELETE", WS "/fileServers/{fileServerName}", V::kBatchAi, arm::file_server_delete},
};

#undef OPS
#undef JOB
#undef WS
#undef SA
#undef RG

const std::vector<std::string>& versions_of(const RouteMatch& m) {
  switch (m.route->versions) {
    case ApiVersions::kSubscription: return kSubscriptionVersions;
    case ApiVersions::kResource: return kResourceVersions;
    case ApiVersions::kStorage: return kStorageVersions;
    case ApiVersions::kBatchAi: return kBatchAiVersions;
    case ApiVersions::kByProvider: break;
  }
  const std::string provider = to_lower(m.args["provider"]);
  return provider == "microsoft.batchai" ? kBatchAiVersions : provider == "microsoft.storage" ? kStorageVersions
                                                                                              : kResourceVersions;
}

}  // namespace
}  // namespace arm

std::span<const ArmRoute> arm_route_table() { return arm::kRoutes; }

void handle_arm(Call& call, ArmContext& ctx) {
  // Another subscription is refused as such whatever follows it (ARM's answer).
  if (call.low.size() >= 2 && call.low[0] == "subscriptions" && !iequals(call.segs[1], subscription_id()))
    return call.error(404, "SubscriptionNotFound", "The subscription was not found: this server has only " +
                                                       subscription_id() + ".");
  const RouteMatch m = match_route(arm_route_table(), call.method(), call.low, call.segs);
  if (m.outcome == RouteMatch::Outcome::kNoPath)
    return call.error(404, "NotFound", "batchai serve has no operation at this path (see docs/serve.md for what is served).");
  if (!check_api_version(call, arm::versions_of(m))) return;
  if (m.outcome == RouteMatch::Outcome::kNoMethod)
    return call.error(405, "MethodNotAllowed", "The method " + call.method() + " is not served for this resource.");
  m.route->handler(call, ctx, m.args);
}

}  // namespace batchai::serve
