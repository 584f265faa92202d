// The hierarchical shared-memory communicator (see shm_communicator.hpp).
#include "shm_communicator.hpp"

#include <cstdio>
#include <optional>

#include "batchai/common/errors.hpp"
#include "batchai/train/mpi_communicator.hpp"
#include "comm_env.hpp"
#include "host_layout.hpp"
#include "mpi_error.hpp"
#include "ring_allreduce.hpp"
#include "shm_reducer.hpp"
#include "shm_segment.hpp"

namespace batchai::train {
namespace {

using detail::check_mpi;

class ShmCommunicator final : public Communicator {
 public:
  ShmCommunicator(std::unique_ptr<Communicator> mpi, std::unique_ptr<detail::HostLayout> layout,
                  std::unique_ptr<detail::ShmSegment> segment, std::size_t chunk_floats, double timeout_s,
                  detail::SlotWrites writes)
      : mpi_(std::move(mpi)), layout_(std::move(layout)), segment_(std::move(segment)) {
    if (segment_) {
      reducer_.emplace(segment_->data(), layout_->local_rank(), layout_->local_size(), chunk_floats, timeout_s,
                       layout_->local_world_ranks(), writes);
    }
    if (layout_->hosts() > 1 && layout_->leaders() != MPI_COMM_NULL) {
      ring_.emplace(layout_->leaders(), detail::ring_chunk_bytes(), timeout_s);
    }
  }

  int rank() const override { return mpi_->rank(); }
  int size() const override { return mpi_->size(); }

  void allreduce_sum(float* data, std::size_t count) override {
    if (layout_->hosts() == 1) {
      reducer_->allreduce(data, count, true);
      return;
    }
    if (reducer_) reducer_->allreduce(data, count, /*gather=*/false);  // the host's sum, on local rank 0
    if (ring_) ring_->sum(data, count);                                 // local rank 0s: the hosts' sums
    if (reducer_) reducer_->broadcast(data, count);
  }

  void broadcast(float* data, std::size_t count, int root) override { mpi_->broadcast(data, count, root); }
  void allreduce_sum(double* data, std::size_t count) override { mpi_->allreduce_sum(data, count); }
  void barrier() override { mpi_->barrier(); }
  void check_agreement(long long value, const std::string& what) override { mpi_->check_agreement(value, what); }
  std::string name() const override { return "shm"; }

 private:
  std::unique_ptr<Communicator> mpi_;  // MPI_Allreduce and friends for everything but the float sum
  std::unique_ptr<detail::HostLayout> layout_;
  std::unique_ptr<detail::ShmSegment> segment_;  // none on a host of one rank
  std::optional<detail::ShmReducer> reducer_;
  std::optional<detail::RingAllreduce> ring_;  // local rank 0s, when there are several hosts
};

}  // namespace

std::unique_ptr<Communicator> make_shm_communicator(std::string* why) {
  auto mpi = make_mpi_communicator(AllreduceAlgorithm::kMpi);
  const double timeout_s = detail::comm_timeout_seconds();
  const detail::SlotWrites writes = detail::shm_slot_writes();
  auto layout = std::make_unique<detail::HostLayout>(MPI_COMM_WORLD);
  std::unique_ptr<detail::ShmSegment> segment;
  const int local_size = layout->local_size();
  const std::size_t chunk_floats = detail::shm_chunk_bytes(local_size) / sizeof(float);
  if (local_size > 1) {
    segment = detail::ShmSegment::open(
        layout->local(), detail::ShmReducer::segment_bytes(local_size, chunk_floats),
        [&](void* p) { detail::ShmReducer::format(p, local_size, chunk_floats); }, why);
  }
  // Every host must take the same path, or the hosts' leaders would wait on different collectives.
  int ok = (local_size == 1 || segment) ? 1 : 0, all_ok = 0;
  check_mpi(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce (shm agreement)");
  if (!all_ok) {
    if (why->empty()) *why = "another host could not create its shared-memory segment";
    return nullptr;
  }
  int world_rank = 0, world_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (world_rank == 0)  // the layout the job got, in its stderr: which ranks share a host is MPI's word
    std::fprintf(stderr, "batchai: allreduce through shared memory within each host%s: %d ranks on %d host(s)\n",
                 layout->hosts() > 1 ? ", a ring between the hosts' first ranks" : "", world_size, layout->hosts());
  return std::make_unique<ShmCommunicator>(std::move(mpi), std::move(layout), std::move(segment), chunk_floats,
                                           timeout_s, writes);
}

}  // namespace batchai::train
