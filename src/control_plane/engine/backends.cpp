// The registry of backends: one per kind, looked up by the row in hand.
#include "batchai/common/errors.hpp"
#include "cluster_backend.hpp"
#include "store/rows.hpp"
#include "store/jobs.hpp"

namespace batchai::control_plane {

void Backends::add(std::unique_ptr<ClusterBackend> backend) { backends_.push_back(std::move(backend)); }

ClusterBackend& Backends::of(ClusterKind kind) const {
  for (const auto& b : backends_)
    if (b->kind() == kind) return *b;
  throw Error("No backend for this kind of cluster was made by the composition root.");
}

ClusterBackend& Backends::of(const ClusterRow& cluster) const { return of(cluster.kind); }

ClusterBackend& Backends::of(const JobRow& job) const { return of(job.kind); }

ClusterBackend& Backends::for_new(const ClusterCreateOptions& options, const Json& properties) const {
  for (const auto& b : backends_)
    if (b->kind() != ClusterKind::kSimulated && b->claims(options, properties)) return *b;
  return of(ClusterKind::kSimulated);
}

}  // namespace batchai::control_plane
