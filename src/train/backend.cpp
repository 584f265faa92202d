// Backend selection: the CPU backend always, CUDA through a factory the CUDA target registers.
#include "batchai/train/backend.hpp"

#include "batchai/common/errors.hpp"
#include "cpu/cpu_backend.hpp"

namespace batchai::train {
namespace {
BackendFactory& cuda_factory() {
  static BackendFactory factory = nullptr;
  return factory;
}
DeviceCommunicatorFactory& device_communicator_factory() {
  static DeviceCommunicatorFactory factory = nullptr;
  return factory;
}
}  // namespace

void register_cuda_backend_factory(BackendFactory factory) { cuda_factory() = factory; }

void register_device_communicator_factory(DeviceCommunicatorFactory factory) {
  device_communicator_factory() = factory;
}

std::unique_ptr<Communicator> make_device_communicator(AllreduceAlgorithm host_algorithm) {
  if (device_communicator_factory() == nullptr) return nullptr;
  return device_communicator_factory()(host_algorithm);
}

BackendKind parse_backend_kind(const std::string& text) {
  if (text == "cpu") return BackendKind::kCpu;
  if (text == "cuda") return BackendKind::kCuda;
  if (text == "auto") return BackendKind::kAuto;
  throw InvalidArgument("unknown backend '" + text + "'; use cpu, cuda or auto");
}

std::unique_ptr<Backend> make_backend(BackendKind kind, int threads) {
  if (kind != BackendKind::kCpu) {
    if (cuda_factory() != nullptr) {
      if (auto cuda = cuda_factory()(threads)) return cuda;
      if (kind == BackendKind::kCuda) {
        throw Error("--backend cuda: no CUDA device is available; use --backend cpu or auto");
      }
    } else if (kind == BackendKind::kCuda) {
      throw Error("CUDA backend not built: this batchai was compiled without the CUDA toolkit; "
                  "use --backend cpu (or auto), or rebuild with -DBATCHAI_CUDA=ON on a machine with CUDA");
    }
  }
  return std::make_unique<cpu::CpuBackend>(threads);
}

}  // namespace batchai::train
