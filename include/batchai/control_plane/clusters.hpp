// `batchai cluster ...` and `list-usages`: clusters, their scale settings and allocation state,
// and the regional vCPU quota. The nodes themselves are the Nodes service's.
#pragma once
#include <cstdint>
#include <string>

#include "batchai/common/json_util.hpp"
#include "batchai/control_plane/list_page.hpp"
#include "batchai/control_plane/options.hpp"

namespace batchai::control_plane {

class Context;
class Reconciler;
class Engines;
class ClusterDocs;
class JobEnding;
class AutoStorage;

class Clusters {
 public:
  Clusters(const Context& cx, Reconciler& reconciler, const Engines& engines, const ClusterDocs& docs, JobEnding& ending, AutoStorage& auto_storage)
      : cx_(cx), reconciler_(reconciler), engines_(engines), docs_(docs), ending_(ending), auto_storage_(auto_storage) {}

  Json create(const ClusterCreateOptions& options);
  Json show(const WorkspaceRef& ref, const std::string& name);
  Json list(const WorkspaceRef& ref);
  Page list_page(const WorkspaceRef& ref, const PageRequest& page);  // keyed by name
  Json resize(const WorkspaceRef& ref, const std::string& name, int target);
  Json auto_scale(const WorkspaceRef& ref, const std::string& name, int min_nodes, int max_nodes);
  void remove(const WorkspaceRef& ref, const std::string& name);  // fails the jobs running on it
  Json list_usages(const std::string& location);

  // --- for tests ---
  // The auto-scale demand the scheduler sets (cluster_docs.hpp).
  void set_auto_scale_demand(std::int64_t cluster_row_id, int nodes);

 private:
  Json document(const WorkspaceRef& ref, const std::string& name);  // stored, not reconciled

  const Context& cx_;
  Reconciler& reconciler_;
  const Engines& engines_;
  const ClusterDocs& docs_;
  JobEnding& ending_;
  AutoStorage& auto_storage_;
};

}  // namespace batchai::control_plane
