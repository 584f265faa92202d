// `batchai cluster node ...` and `cluster file list`, through the engine of the cluster's engine
// (the simulation's node steps are engine/simulated/node_steps.hpp).
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>

#include "batchai/common/json_util.hpp"
#include "batchai/control_plane/options.hpp"

namespace batchai::control_plane {

class Context;
class Reconciler;
class Engines;

class Nodes {
 public:
  Nodes(const Context& cx, Reconciler& reconciler, const Engines& engines)
      : cx_(cx), reconciler_(reconciler), engines_(engines) {}

  Json list(const WorkspaceRef& ref, const std::string& cluster);
  // Runs --exec in the node's folder and environment; output lines go to `out`. Returns nothing
  // printable (exit 0 whatever the command's exit code, as the original).
  void exec(const WorkspaceRef& ref, const std::string& cluster, const NodeExecOptions& options);
  Json file_list(const WorkspaceRef& ref, const std::string& cluster, const std::string& path, int expiry_minutes);

 private:
  const Context& cx_;
  Reconciler& reconciler_;
  const Engines& engines_;
};

}  // namespace batchai::control_plane
