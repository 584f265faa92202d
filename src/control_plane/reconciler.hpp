// Brings simulated and engine state up to now: file servers, the node work of pending clusters
// (through each cluster's engine), the engines of the clusters a command touches, then the
// scheduler. Each service entry point reconciles once.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "batchai/control_plane/jobs.hpp"
#include "batchai/control_plane/options.hpp"
#include "engine/cluster_kind.hpp"

namespace batchai::control_plane {

class Engines;
class ClusterDocs;
class Context;
class Scheduler;
class Store;

// The clusters a command shows or changes: their engines are asked at its reconcile (within
// the engine's bound); an empty scope asks no engine anything.
struct ClusterScope {
  std::vector<std::pair<std::int64_t, ClusterKind>> clusters;
  static ClusterScope of_cluster(Store& store, const WorkspaceRef& ref, const std::string& name);
  static ClusterScope of_workspace(Store& store, const WorkspaceRef& ref);
  // The cluster of the job while it is unfinished.
  static ClusterScope of_job(Store& store, const JobRef& ref);
  // The clusters of the experiment's unfinished jobs.
  static ClusterScope of_experiment(Store& store, const WorkspaceRef& where, const std::string& experiment);
  // The first `limit` clusters of the home (row order).
  static ClusterScope of_home(Store& store, std::size_t limit);
};

class Reconciler {
 public:
  Reconciler(const Context& cx, const Engines& engines, const ClusterDocs& docs, Scheduler& scheduler)
      : cx_(cx), engines_(engines), docs_(docs), scheduler_(scheduler) {}
  void reconcile(const ClusterScope& scope = {});
  // reconcile() without the scheduler's step, for a command that runs the step itself once its
  // own change is written (job create: one step instead of two).
  void reconcile_before_schedule(const ClusterScope& scope = {});
  // Only the scheduler's step: queued jobs that can start now get their nodes (a new job, right
  // after its row is written), without the rest of a reconcile.
  void schedule();
  // Steps every cluster with pending node work to `now_us` (a resize starts at once).
  void step_clusters(std::int64_t now_us);
  // How many times reconcile() ran (tests: one command reconciles once).
  std::uint64_t count() const { return count_; }

 private:
  const Context& cx_;
  const Engines& engines_;
  const ClusterDocs& docs_;
  Scheduler& scheduler_;
  std::uint64_t count_ = 0;
};

}  // namespace batchai::control_plane
