// The registry of engines: one per kind, looked up by the row in hand.
#include "batchai/common/errors.hpp"
#include "cluster_engine.hpp"
#include "store/rows.hpp"
#include "store/jobs.hpp"

namespace batchai::control_plane {

void Engines::add(std::unique_ptr<ClusterEngine> engine) { engines_.push_back(std::move(engine)); }

ClusterEngine& Engines::of(ClusterKind kind) const {
  for (const auto& b : engines_)
    if (b->kind() == kind) return *b;
  throw Error("No engine for this kind of cluster was made by the composition root.");
}

ClusterEngine& Engines::of(const ClusterRow& cluster) const { return of(cluster.kind); }

ClusterEngine& Engines::of(const JobRow& job) const { return of(job.kind); }

ClusterEngine& Engines::for_new(const ClusterCreateOptions& options, const Json& properties) const {
  for (const auto& b : engines_)
    if (b->kind() != ClusterKind::kSimulated && b->claims(options, properties)) return *b;
  return of(ClusterKind::kSimulated);
}

}  // namespace batchai::control_plane
