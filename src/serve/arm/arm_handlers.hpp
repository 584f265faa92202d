// The handlers the ARM route table (arm_routes.cpp) points at, one per (method, path pattern):
// subscriptions, Microsoft.Resources and Microsoft.Storage in arm_routes.cpp, Microsoft.BatchAI in
// arm_batchai_routes.cpp. A handler gets its path's captured names, checked api-version and
// method already; it answers through `call` or throws (error_answer.hpp maps the exception).
#pragma once
#include <optional>
#include <string>

#include "arm/arm_route_table.hpp"
#include "arm/arm_routes.hpp"

namespace batchai::serve::arm {

inline constexpr const char* kResources = "Microsoft.Resources";
inline constexpr const char* kStorage = "Microsoft.Storage";
inline constexpr const char* kBatchAi = "Microsoft.BatchAI";

// A body's string member: nullopt when absent or null; InvalidRequestContent when not a string.
std::optional<std::string> string_at(const Json& object, const char* key);
// A body's "tags": nullopt when absent or null (the control plane checks the rest).
std::optional<Json> tags_at(const Json& body);

// Microsoft.BatchAI (arm_batchai_routes.cpp).
void operations_list(Call& call, ArmContext& ctx, const RouteArgs& a);
void usages_list(Call& call, ArmContext& ctx, const RouteArgs& a);
void workspaces_list_all(Call& call, ArmContext& ctx, const RouteArgs& a);
void workspaces_list(Call& call, ArmContext& ctx, const RouteArgs& a);
void workspace_get(Call& call, ArmContext& ctx, const RouteArgs& a);
void workspace_put(Call& call, ArmContext& ctx, const RouteArgs& a);
void workspace_patch(Call& call, ArmContext& ctx, const RouteArgs& a);
void workspace_delete(Call& call, ArmContext& ctx, const RouteArgs& a);
void experiments_list(Call& call, ArmContext& ctx, const RouteArgs& a);
void experiment_get(Call& call, ArmContext& ctx, const RouteArgs& a);
void experiment_put(Call& call, ArmContext& ctx, const RouteArgs& a);
void experiment_delete(Call& call, ArmContext& ctx, const RouteArgs& a);
void jobs_list(Call& call, ArmContext& ctx, const RouteArgs& a);
void job_get(Call& call, ArmContext& ctx, const RouteArgs& a);
void job_put(Call& call, ArmContext& ctx, const RouteArgs& a);
void job_delete(Call& call, ArmContext& ctx, const RouteArgs& a);
void job_terminate(Call& call, ArmContext& ctx, const RouteArgs& a);
void job_remote_logins(Call& call, ArmContext& ctx, const RouteArgs& a);
void job_output_files(Call& call, ArmContext& ctx, const RouteArgs& a);
void clusters_list(Call& call, ArmContext& ctx, const RouteArgs& a);
void cluster_get(Call& call, ArmContext& ctx, const RouteArgs& a);
void cluster_put(Call& call, ArmContext& ctx, const RouteArgs& a);
void cluster_patch(Call& call, ArmContext& ctx, const RouteArgs& a);
void cluster_delete(Call& call, ArmContext& ctx, const RouteArgs& a);
void cluster_remote_logins(Call& call, ArmContext& ctx, const RouteArgs& a);
void file_servers_list(Call& call, ArmContext& ctx, const RouteArgs& a);
void file_server_get(Call& call, ArmContext& ctx, const RouteArgs& a);
void file_server_put(Call& call, ArmContext& ctx, const RouteArgs& a);
void file_server_delete(Call& call, ArmContext& ctx, const RouteArgs& a);

}  // namespace batchai::serve::arm
