// The device collectives under mpiexec -n 2 (a plain program, not GoogleTest): host-staged
// allreduce and broadcast of device buffers always, NCCL when every rank has its own GPU, host
// pointers and doubles through MPI. Exit 77 (ctest: skipped) when no CUDA device exists.
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "batchai/common/errors.hpp"
#include "batchai/train/communicator.hpp"
#include "batchai/train/mpi_session.hpp"
#include "batchai/train_cuda/cuda_backend.hpp"
#include "batchai/train_cuda/cuda_device.hpp"
#include "batchai/train_cuda/nccl_communicator.hpp"

namespace {

using namespace batchai;
using train_cuda::DeviceCollectives;

int failures = 0;

void expect(bool ok, const std::string& what, int rank) {
  if (!ok) {
    std::fprintf(stderr, "rank %d: FAILED: %s\n", rank, what.c_str());
    ++failures;
  }
}

// Integer-valued floats, so sums over ranks are exact in any order.
float value(int rank, std::size_t i) { return static_cast<float>((rank + 1) * static_cast<int>(i % 1000)); }

void exercise(train::Communicator& comm, train::Backend& backend, const std::string& label) {
  const int rank = comm.rank(), size = comm.size();
  for (const std::size_t count : {std::size_t{1}, std::size_t{3}, std::size_t{1250858}}) {
    std::vector<float> host(count);
    for (std::size_t i = 0; i < count; ++i) host[i] = value(rank, i);
    train::Buffer buffer = backend.allocate(count);
    backend.upload(buffer, host.data(), count, 0);
    comm.allreduce_sum(buffer.data, count);
    backend.download(host.data(), buffer, count, 0);
    bool ok = true;
    for (std::size_t i = 0; i < count && ok; ++i) {
      float expected = 0.0f;
      for (int r = 0; r < size; ++r) expected += value(r, i);
      ok = host[i] == expected;
    }
    expect(ok, label + ": device allreduce of " + std::to_string(count) + " floats", rank);

    for (std::size_t i = 0; i < count; ++i) host[i] = value(rank, i);
    backend.upload(buffer, host.data(), count, 0);
    comm.broadcast(buffer.data, count, size - 1);
    backend.download(host.data(), buffer, count, 0);
    ok = true;
    for (std::size_t i = 0; i < count && ok; ++i) ok = host[i] == value(size - 1, i);
    expect(ok, label + ": device broadcast of " + std::to_string(count) + " floats", rank);
    backend.release(buffer);
  }
  std::vector<float> host_floats{static_cast<float>(rank), 1.0f};
  comm.allreduce_sum(host_floats.data(), host_floats.size());
  expect(host_floats[1] == static_cast<float>(size), label + ": host-pointer allreduce", rank);
  double metrics[2] = {0.5, static_cast<double>(rank)};
  comm.allreduce_sum(metrics, 2);
  expect(metrics[0] == 0.5 * size, label + ": double allreduce", rank);
  comm.check_agreement(1250858, "the parameter count");
  comm.barrier();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    train::MpiSession session(&argc, &argv);
    const int rank = session.rank();
    if (train_cuda::device_count() == 0) {
      if (rank == 0) {
        std::printf("SKIP: no CUDA device: %s\n", train_cuda::device_unavailable_reason().c_str());
      }
      return 77;
    }
    auto backend = train_cuda::make_cuda_backend();
    {
      auto staged = train_cuda::make_nccl_communicator({DeviceCollectives::kHostStaged, train::AllreduceAlgorithm::kRing});
      expect(staged->name() == "host-staged", "host-staged name", rank);
      exercise(*staged, *backend, "host-staged");
    }
    auto automatic = train_cuda::make_nccl_communicator();
    if (automatic->name() == "nccl") {
      exercise(*automatic, *backend, "nccl");
    } else {
      if (rank == 0) std::printf("NCCL part skipped: ranks share a GPU (%d device(s))\n", train_cuda::device_count());
      exercise(*automatic, *backend, "auto (host-staged)");
      // Asking for NCCL explicitly must fail on every rank with a clear message, not hang.
      try {
        train_cuda::make_nccl_communicator({DeviceCollectives::kNccl, train::AllreduceAlgorithm::kRing});
        expect(false, "kNccl with a shared GPU must throw", rank);
      } catch (const Error& e) {
        expect(std::string(e.what()).find("share GPU") != std::string::npos, std::string("message: ") + e.what(),
               rank);
      }
    }
    if (rank == 0) std::printf("%s\n", failures == 0 ? "PASSED" : "FAILED");
    return failures == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
