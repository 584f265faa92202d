// The ARM operations of `batchai serve` (docs/serve.md "What is served"): subscriptions and
// tenants, Microsoft.Resources resource groups, Microsoft.Storage accounts, and Microsoft.BatchAI
// 2018-05-01 workspaces, experiments, clusters, file servers, jobs, usages and operations, each
// answered from the control plane's services.
#pragma once
#include <filesystem>

#include "batchai/control_plane/control_plane.hpp"
#include "batchai/serve/server.hpp"
#include "arm/call.hpp"
#include "arm/operations.hpp"
#include "arm/wire_cache.hpp"

namespace batchai::serve {

struct ArmContext {
  control_plane::ControlPlane& cp;
  Operations& operations;
  const Identity& identity;
  WireCache& job_wire;                // the jobs' wire text, shared by every worker
};

// Answers every request that passed the bearer check through the route table
// (arm_route_table.hpp): 404 NotFound for a path no row has, 405 MethodNotAllowed for a method
// the path's rows lack, 404 SubscriptionNotFound for another subscription.
void handle_arm(Call& call, ArmContext& ctx);

}  // namespace batchai::serve
