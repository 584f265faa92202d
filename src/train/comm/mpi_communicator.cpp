// MPI-backed Communicator over a private duplicate of MPI_COMM_WORLD: sum allreduce by our
// own ring (kRing) or MPI_Allreduce (kMpi), broadcast, and the agreement check.
#include "batchai/train/mpi_communicator.hpp"

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "batchai/common/errors.hpp"
#include "batchai/train/communicator.hpp"
#include "comm_env.hpp"
#include "mpi_c.hpp"
#include "mpi_error.hpp"
#include "ring_allreduce.hpp"

namespace batchai::train {
namespace {

using detail::check_mpi;

// MPI counts are ints: longer buffers go in pieces.
constexpr std::size_t kMaxCount = std::size_t{1} << 30;

class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(AllreduceAlgorithm algorithm) : algorithm_(algorithm) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      throw Error("MPI is not initialised: create a batchai::train::MpiSession before "
                  "make_mpi_communicator()");
    }
    // A private communicator keeps our tags apart from anyone else's traffic.
    check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
    if (algorithm_ == AllreduceAlgorithm::kRing) {
      ring_ = std::make_unique<detail::RingAllreduce>(comm_, detail::ring_chunk_bytes(),
                                                      detail::comm_timeout_seconds());
    }
  }

  ~MpiCommunicator() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }

  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void allreduce_sum(float* data, std::size_t count) override {
    if (ring_) {
      ring_->sum(data, count);
      return;
    }
    for (std::size_t off = 0; off < count; off += kMaxCount) {
      const int n = static_cast<int>(std::min(kMaxCount, count - off));
      check_mpi(MPI_Allreduce(MPI_IN_PLACE, data + off, n, MPI_FLOAT, MPI_SUM, comm_),
                "MPI_Allreduce (float sum)");
    }
  }

  void broadcast(float* data, std::size_t count, int root) override {
    if (root < 0 || root >= size_) {
      throw InvalidArgument("broadcast root " + std::to_string(root) + " is not a rank of " +
                            std::to_string(size_) + " ranks");
    }
    for (std::size_t off = 0; off < count; off += kMaxCount) {
      const int n = static_cast<int>(std::min(kMaxCount, count - off));
      check_mpi(MPI_Bcast(data + off, n, MPI_FLOAT, root, comm_), "MPI_Bcast");
    }
  }

  void allreduce_sum(double* data, std::size_t count) override {
    for (std::size_t off = 0; off < count; off += kMaxCount) {
      const int n = static_cast<int>(std::min(kMaxCount, count - off));
      check_mpi(MPI_Allreduce(MPI_IN_PLACE, data + off, n, MPI_DOUBLE, MPI_SUM, comm_),
                "MPI_Allreduce (double sum)");
    }
  }

  void barrier() override { check_mpi(MPI_Barrier(comm_), "MPI_Barrier"); }

  void check_agreement(long long value, const std::string& what) override {
    // Every rank learns every value, so every rank can throw the same message.
    std::vector<long long> values(static_cast<std::size_t>(size_));
    check_mpi(MPI_Allgather(&value, 1, MPI_LONG_LONG, values.data(), 1, MPI_LONG_LONG, comm_),
              "MPI_Allgather (agreement check)");
    if (std::all_of(values.begin(), values.end(), [&](long long v) { return v == values[0]; })) {
      return;
    }
    std::string detail;
    for (int r = 0; r < size_; ++r) {
      if (!detail.empty()) detail += ", ";
      detail += "rank " + std::to_string(r) + " has " + std::to_string(values[std::size_t(r)]);
    }
    std::string odd;  // ranks whose value differs from rank 0's
    for (int r = 1; r < size_; ++r) {
      if (values[std::size_t(r)] != values[0]) odd += (odd.empty() ? "" : ",") + std::to_string(r);
    }
    throw Error("ranks disagree on " + what + ": " + detail + " (rank(s) " + odd +
                " differ from rank 0); every rank must run the same model and options");
  }

  std::string name() const override { return ring_ ? "ring" : "mpi"; }

 private:
  AllreduceAlgorithm algorithm_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  std::unique_ptr<detail::RingAllreduce> ring_;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator(AllreduceAlgorithm algorithm) {
  return std::make_unique<MpiCommunicator>(algorithm);
}

}  // namespace batchai::train
