// Backend selection: the CPU backend always, CUDA through factories the CUDA target registers
// (linked in) or hands over from its plugin (loaded on first use, from the file the caller names).
#include "batchai/train/backend.hpp"

#include <dlfcn.h>

#include <filesystem>

#include "batchai/common/errors.hpp"
#include "batchai/train/trainer_plugin.hpp"
#include "cpu/cpu_backend.hpp"

namespace batchai::train {

void Backend::dense_backward_data(const DenseShape&, const Buffer&, std::size_t, const Buffer&, Buffer&, Buffer*,
                                  Buffer&, std::size_t, bool) {
  throw Error(name() + " backend: no dense backward without its weight gradient (internal error)");
}

void Backend::rmsprop_dense_from_factors(const DenseShape&, const Buffer&, const Buffer&, Buffer&, Buffer&,
                                         std::size_t, std::size_t, float, float, float) {
  throw Error(name() + " backend: no dense update from the gradient's factors (internal error)");
}

void Backend::maxpool2_forward_routed(int, int, int, int, const Buffer&, PoolLayouts, const PoolRouting&, Buffer&,
                                      Buffer&) {
  throw Error(name() + " backend: no routed pooling (internal error)");
}

void Backend::maxpool2_backward_routed(int, int, int, int, const Buffer&, const Buffer&, const PoolRouting&,
                                       PoolLayouts, Buffer&) {
  throw Error(name() + " backend: no routed pooling (internal error)");
}

namespace {
BackendFactory& cuda_factory() {
  static BackendFactory factory = nullptr;
  return factory;
}
DeviceCommunicatorFactory& device_communicator_factory() {
  static DeviceCommunicatorFactory factory = nullptr;
  return factory;
}

// Loads the plugin at `path` once and registers its factories. Returns why it could not (""
// on success); no file is reported as "missing" so that callers can tell "not built" from "broken".
const std::string& load_cuda_plugin(const std::filesystem::path& path) {
  static const std::string why = [&path] () -> std::string {
    std::error_code ec;
    if (path.empty() || !std::filesystem::exists(path, ec)) return "missing";
    // Never closed: the factories and the objects they make live in it.
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) return "could not load " + path.string() + ": " + ::dlerror();
    using Entry = int (*)(int, BackendFactory*, DeviceCommunicatorFactory*);
    auto entry = reinterpret_cast<Entry>(::dlsym(handle, kCudaPluginEntry));
    if (entry == nullptr) return path.string() + " has no entry point " + kCudaPluginEntry;
    BackendFactory backend = nullptr;
    DeviceCommunicatorFactory communicator = nullptr;
    if (entry(kCudaPluginAbi, &backend, &communicator) != 0 || backend == nullptr)
      return path.string() + " was built for another batchai (plugin ABI mismatch)";
    cuda_factory() = backend;
    device_communicator_factory() = communicator;
    return "";
  }();
  return why;
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

bool has_device_communicator() { return device_communicator_factory() != nullptr; }

BackendKind parse_backend_kind(const std::string& text) {
  if (text == "cpu") return BackendKind::kCpu;
  if (text == "cuda") return BackendKind::kCuda;
  if (text == "auto") return BackendKind::kAuto;
  throw InvalidArgument("unknown backend '" + text + "'; use cpu, cuda or auto");
}

Precision parse_precision(const std::string& text) {
  if (text == "float32") return Precision::kFloat32;
  if (text == "mixed_bfloat16") return Precision::kMixedBfloat16;
  throw InvalidArgument("unknown precision '" + text + "'; use float32 or mixed_bfloat16");
}

std::unique_ptr<Backend> make_backend(BackendKind kind, int threads, const std::string& cuda_plugin,
                                      Precision precision) {
  if (kind == BackendKind::kCpu) return std::make_unique<cpu::CpuBackend>(threads, precision);
  const std::string why = cuda_factory() != nullptr ? "" : load_cuda_plugin(cuda_plugin);
  if (cuda_factory() != nullptr) {
    if (auto cuda = cuda_factory()(threads)) {
      if (precision != Precision::kFloat32) {
        throw InvalidArgument("--precision mixed_bfloat16: the CUDA backend trains in float32 only; use --backend cpu");
      }
      return cuda;
    }
    if (kind == BackendKind::kCuda) throw Error("--backend cuda: no CUDA device is available; use --backend cpu or auto");
  } else if (kind == BackendKind::kCuda) {
    if (why == "missing") {
      throw Error("CUDA backend not built: this batchai was compiled without the CUDA toolkit (no " +
                  (cuda_plugin.empty() ? std::string(kCudaPluginFile) : cuda_plugin) +
                  "); use --backend cpu (or auto), or rebuild on a machine with CUDA, cuDNN and NCCL");
    }
    throw Error("--backend cuda: " + why);
  }
  return std::make_unique<cpu::CpuBackend>(threads, precision);
}

}  // namespace batchai::train
