// Device collectives for the CUDA trainer: NCCL (one GPU per rank) or host staging through the
// MPI ring (ranks sharing a GPU); host data, metrics and agreement checks always go over MPI.
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include "batchai/common/errors.hpp"
#include "batchai/train/mpi_communicator.hpp"
#include "batchai/train_cuda/cuda_backend.hpp"
#include "batchai/train_cuda/cuda_device.hpp"
#include "batchai/train_cuda/nccl_communicator.hpp"
#include "cuda_check.hpp"

namespace batchai::train_cuda {
namespace {

// A collective that makes no progress for this long means a rank died or stalled.
constexpr auto kStallTimeout = std::chrono::seconds(300);
constexpr std::size_t kIdentityBytes = 192;  // "hostname|pci-bus-id", zero padded

void check_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw Error(std::string("MPI call ") + what + " failed while setting up device collectives: " + text, "MpiError");
}

// Where this rank's GPU is: the same string on two ranks means they share one device.
std::array<char, kIdentityBytes> device_identity(int device) {
  std::array<char, kIdentityBytes> id{};
  char host[96] = {};
  gethostname(host, sizeof(host) - 1);
  char bus[64] = {};
  BATCHAI_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof(bus), device));
  const std::string text = std::string(host) + "|" + bus;
  std::memcpy(id.data(), text.data(), std::min(text.size(), kIdentityBytes - 1));
  return id;
}

class DeviceCommunicator final : public train::Communicator {
 public:
  explicit DeviceCommunicator(const NcclOptions& options) {
    host_ = train::make_mpi_communicator(options.host_algorithm);
    device_ = select_local_device();
    check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    try {
      setup(options);
    } catch (...) {
      // No destructor runs for a half-built object: free what setup() may have made.
      release();
      throw;
    }
  }

  ~DeviceCommunicator() override { release(); }

  DeviceCommunicator(const DeviceCommunicator&) = delete;
  DeviceCommunicator& operator=(const DeviceCommunicator&) = delete;

  int rank() const override { return host_->rank(); }
  int size() const override { return host_->size(); }
  std::string name() const override { return name_; }
  // Device buffers go over NCCL (or host staging), host ones over the MPI communicator inside.
  bool accepts(train::BufferKind /*kind*/) const override { return true; }
  void barrier() override { host_->barrier(); }
  void check_agreement(long long value, const std::string& what) override { host_->check_agreement(value, what); }

 private:
  void setup(const NcclOptions& options) {
    check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    DeviceCollectives mode = options.mode;
    if (mode == DeviceCollectives::kAuto) {
      if (const char* env = std::getenv("BATCHAI_NCCL")) mode = parse_device_collectives(env);
    }
    const std::string shared = shared_devices();
    if (mode == DeviceCollectives::kNccl && !shared.empty()) {
      throw Error("NCCL needs one GPU per rank, but " + shared +
                      "; start at most one rank per GPU or use the host-staged collectives (BATCHAI_NCCL=host-staged)",
                  "CudaError");
    }
    const bool use_nccl = mode == DeviceCollectives::kNccl || (mode == DeviceCollectives::kAuto && shared.empty());
    if (use_nccl && host_->size() > 1) init_nccl();
    name_ = use_nccl ? "nccl" : "host-staged";
  }

  // Destruction must not throw: statuses are ignored.
  void release() noexcept {
    if (nccl_ != nullptr) ncclCommDestroy(nccl_);
    nccl_ = nullptr;
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
    stream_ = nullptr;
    if (staging_ != nullptr) cudaFreeHost(staging_);
    staging_ = nullptr;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    comm_ = MPI_COMM_NULL;
  }

 public:
  void allreduce_sum(float* data, std::size_t count) override {
    if (count == 0) return;
    if (!is_device_pointer(data)) return host_->allreduce_sum(data, count);
    if (size() == 1) return;  // the sum over one rank is the data itself
    require_usable();
    // The backend's stream may still be writing the gradients.
    BATCHAI_CUDA_CHECK(cudaDeviceSynchronize());
    if (nccl_ != nullptr) {
      BATCHAI_NCCL_CHECK(ncclAllReduce(data, data, count, ncclFloat, ncclSum, nccl_, stream_));
      wait("ncclAllReduce");
      return;
    }
    float* host = stage_down(data, count);
    host_->allreduce_sum(host, count);
    stage_up(data, host, count);
  }

  void broadcast(float* data, std::size_t count, int root) override {
    if (count == 0) return;
    if (!is_device_pointer(data)) return host_->broadcast(data, count, root);
    if (root < 0 || root >= size()) {
      throw InvalidArgument("broadcast root " + std::to_string(root) + " is not a rank of " + std::to_string(size()) +
                            " ranks");
    }
    if (size() == 1) return;
    require_usable();
    BATCHAI_CUDA_CHECK(cudaDeviceSynchronize());
    if (nccl_ != nullptr) {
      BATCHAI_NCCL_CHECK(ncclBroadcast(data, data, count, ncclFloat, root, nccl_, stream_));
      wait("ncclBroadcast");
      return;
    }
    float* host = stage_down(data, count);
    host_->broadcast(host, count, root);
    stage_up(data, host, count);
  }

  void allreduce_sum(double* data, std::size_t count) override {
    if (count == 0) return;
    if (!is_device_pointer(data)) return host_->allreduce_sum(data, count);
    // Rare (metrics live on the host); staged through a temporary host copy.
    BATCHAI_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<double> host(count);
    BATCHAI_CUDA_CHECK(cudaMemcpy(host.data(), data, count * sizeof(double), cudaMemcpyDeviceToHost));
    host_->allreduce_sum(host.data(), count);
    BATCHAI_CUDA_CHECK(cudaMemcpy(data, host.data(), count * sizeof(double), cudaMemcpyHostToDevice));
  }

 private:
  // "" when every rank has its own GPU, else which ranks share which device.
  std::string shared_devices() {
    const auto mine = device_identity(device_);
    std::vector<char> all(kIdentityBytes * static_cast<std::size_t>(size()));
    check_mpi(MPI_Allgather(mine.data(), static_cast<int>(kIdentityBytes), MPI_CHAR, all.data(),
                            static_cast<int>(kIdentityBytes), MPI_CHAR, comm_),
              "MPI_Allgather (device identities)");
    std::map<std::string, std::vector<int>> by_device;
    for (int r = 0; r < size(); ++r) by_device[std::string(all.data() + kIdentityBytes * r)].push_back(r);
    std::string text;
    for (const auto& [device, ranks] : by_device) {
      if (ranks.size() < 2) continue;
      std::string list;
      for (int r : ranks) list += (list.empty() ? "" : ",") + std::to_string(r);
      text += (text.empty() ? "" : "; ") + std::string("ranks ") + list + " share GPU " + device;
    }
    return text;
  }

  void init_nccl() {
    ncclUniqueId id{};
    if (rank() == 0) BATCHAI_NCCL_CHECK(ncclGetUniqueId(&id));
    check_mpi(MPI_Bcast(&id, static_cast<int>(sizeof(id)), MPI_BYTE, 0, comm_), "MPI_Bcast (ncclUniqueId)");
    BATCHAI_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    BATCHAI_NCCL_CHECK(ncclCommInitRank(&nccl_, size(), id, rank()));
  }

  // After an abort the communicator stays unusable (never a silent switch to host staging).
  void abort_nccl() {
    ncclCommAbort(nccl_);
    nccl_ = nullptr;
    aborted_ = true;
  }

  void require_usable() const {
    if (aborted_) {
      throw Error("the NCCL communicator was aborted after an earlier failure; restart the job", "CudaError");
    }
  }

  // Polls the collective so a dead or stalled peer becomes an error instead of a hang.
  void wait(const char* what) {
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
      const cudaError_t rc = cudaStreamQuery(stream_);
      if (rc == cudaSuccess) return;
      if (rc != cudaErrorNotReady) BATCHAI_CUDA_CHECK(rc);
      ncclResult_t async = ncclSuccess;
      BATCHAI_NCCL_CHECK(ncclCommGetAsyncError(nccl_, &async));
      if (async != ncclSuccess && async != ncclInProgress) {
        abort_nccl();
        throw Error(std::string(what) + " failed on rank " + std::to_string(rank()) + ": " +
                        ncclGetErrorString(async) + " (a peer rank has probably failed)",
                    "CudaError");
      }
      if (std::chrono::steady_clock::now() - start > kStallTimeout) {
        abort_nccl();
        throw Error(std::string(what) + " on rank " + std::to_string(rank()) + " made no progress for " +
                        std::to_string(kStallTimeout.count()) +
                        " s: another rank has died, stalled, or called a different collective",
                    "CudaError");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  float* stage_down(const float* device, std::size_t count) {
    if (count > staging_count_) {
      if (staging_ != nullptr) BATCHAI_CUDA_CHECK(cudaFreeHost(staging_));
      staging_ = nullptr;
      staging_count_ = 0;
      BATCHAI_CUDA_CHECK(cudaMallocHost(&staging_, count * sizeof(float)));
      staging_count_ = count;
    }
    BATCHAI_CUDA_CHECK(cudaMemcpy(staging_, device, count * sizeof(float), cudaMemcpyDeviceToHost));
    return staging_;
  }

  void stage_up(float* device, const float* host, std::size_t count) {
    BATCHAI_CUDA_CHECK(cudaMemcpy(device, host, count * sizeof(float), cudaMemcpyHostToDevice));
  }

  std::unique_ptr<train::Communicator> host_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int device_ = 0;
  std::string name_;
  ncclComm_t nccl_ = nullptr;
  cudaStream_t stream_ = nullptr;
  float* staging_ = nullptr;
  std::size_t staging_count_ = 0;
  bool aborted_ = false;
};

}  // namespace

DeviceCollectives parse_device_collectives(const std::string& text) {
  if (text == "auto") return DeviceCollectives::kAuto;
  if (text == "nccl") return DeviceCollectives::kNccl;
  if (text == "host-staged") return DeviceCollectives::kHostStaged;
  throw InvalidArgument("unknown device collectives '" + text + "'; use auto, nccl or host-staged");
}

std::unique_ptr<train::Communicator> make_nccl_communicator(const NcclOptions& options) {
  return std::make_unique<DeviceCommunicator>(options);
}

}  // namespace batchai::train_cuda
