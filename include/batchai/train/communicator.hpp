// Collectives between the data-parallel ranks of the trainer (Horovod semantics): a sum
// allreduce over one contiguous float arena, a broadcast of the initial weights, and checks
// that every rank agrees on what it is about to exchange. Implementations: shared memory among
// the ranks of a host with the ring across hosts (comm/shm_communicator.hpp), a ring over MPI
// point-to-point, MPI_Allreduce (fallback and test oracle), a single-process no-op, NCCL
// (mpi_communicator.hpp, local_communicator.hpp, train_cuda); communicator_choice.hpp picks one
// for a run.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "batchai/train/buffer.hpp"

namespace batchai::train {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // In place: data[i] = sum over ranks of data[i]. `count` may be any length, also < size().
  virtual void allreduce_sum(float* data, std::size_t count) = 0;
  // In place: every rank receives root's data.
  virtual void broadcast(float* data, std::size_t count, int root) = 0;
  // Sums a few doubles (metrics such as loss and accuracy); small, latency-bound.
  virtual void allreduce_sum(double* data, std::size_t count) = 0;
  virtual void barrier() = 0;
  // Throws batchai::Error naming the ranks that disagree when `value` differs across ranks
  // (e.g. the parameter count), so a mismatch fails every rank instead of hanging one.
  virtual void check_agreement(long long value, const std::string& what) = 0;
  // Short name for logs and benchmarks: "shm", "ring", "mpi", "local", "nccl".
  virtual std::string name() const = 0;
  // Which backend buffers allreduce_buffer() takes: host memory only, unless the communicator
  // can read device memory (the device collectives) or moves nothing (one rank).
  virtual bool accepts(BufferKind kind) const { return kind == BufferKind::kHost; }

  // The gradients' way in: sums a backend buffer over the ranks. Throws batchai::InvalidArgument
  // (before any rank sends) when this communicator does not accept the buffer's kind, so a
  // device buffer never reaches an MPI path.
  void allreduce_buffer(Buffer& buffer);
};

enum class AllreduceAlgorithm { kRing, kMpi };
// "ring" | "mpi" (--allreduce); throws batchai::InvalidArgument otherwise.
AllreduceAlgorithm parse_allreduce_algorithm(const std::string& text);

}  // namespace batchai::train
