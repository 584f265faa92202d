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

#define BATCHAI_ARM_HANDLER(name) void name(Call& call, ArmContext& ctx, const RouteArgs& a)

// Microsoft.BatchAI (arm_batchai_routes.cpp).
BATCHAI_ARM_HANDLER(operations_list);
BATCHAI_ARM_HANDLER(usages_list);
BATCHAI_ARM_HANDLER(workspaces_list_all);
BATCHAI_ARM_HANDLER(workspaces_list);
BATCHAI_ARM_HANDLER(workspace_get);
BATCHAI_ARM_HANDLER(workspace_put);
BATCHAI_ARM_HANDLER(workspace_patch);
BATCHAI_ARM_HANDLER(workspace_delete);
BATCHAI_ARM_HANDLER(experiments_list);
BATCHAI_ARM_HANDLER(experiment_get);
BATCHAI_ARM_HANDLER(experiment_put);
BATCHAI_ARM_HANDLER(experiment_delete);
BATCHAI_ARM_HANDLER(jobs_list);
BATCHAI_ARM_HANDLER(job_get);
BATCHAI_ARM_HANDLER(job_put);
BATCHAI_ARM_HANDLER(job_delete);
BATCHAI_ARM_HANDLER(job_terminate);
BATCHAI_ARM_HANDLER(job_remote_logins);
BATCHAI_ARM_HANDLER(job_output_files);
BATCHAI_ARM_HANDLER(clusters_list);
BATCHAI_ARM_HANDLER(cluster_get);
BATCHAI_ARM_HANDLER(cluster_put);
BATCHAI_ARM_HANDLER(cluster_patch);
BATCHAI_ARM_HANDLER(cluster_delete);
BATCHAI_ARM_HANDLER(cluster_remote_logins);
BATCHAI_ARM_HANDLER(file_servers_list);
BATCHAI_ARM_HANDLER(file_server_get);
BATCHAI_ARM_HANDLER(file_server_put);
BATCHAI_ARM_HANDLER(file_server_delete);

#undef BATCHAI_ARM_HANDLER

}  // namespace batchai::serve::arm
