// `batchai version` and `batchai --version`. The plugins are looked at, never loaded (loading the
// trainer maps oneDNN, OpenMP and MPI: too slow for a version line). CUDA devices are counted by
// the driver API (libcuda.so.1, dlopened only when the CUDA plugin is there); the Slurm client's
// version is `sinfo --version`'s, given two seconds, when there is a slurm.conf to read.
#include "commands/version_command.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>

#include "batchai/common/process.hpp"
#include "command.hpp"
#include "version_info.hpp"

namespace batchai::cli {
namespace {

constexpr std::chrono::milliseconds kSinfoLimit{2000};
constexpr std::size_t kVersionLineLimit = 200;  // a hostile sinfo on PATH cannot flood the output

bool present(const std::filesystem::path& file) {
  std::error_code ec;
  return !file.empty() && std::filesystem::is_regular_file(file, ec);
}

Json plugin(const std::filesystem::path& file) {
  return Json{{"path", file.string()}, {"present", present(file)}};
}

// GPUs the CUDA driver sees; 0 without a driver or a device.
int cuda_device_count() {
  void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) return 0;
  using CuInit = int (*)(unsigned int);
  using CuDeviceGetCount = int (*)(int*);
  auto init = reinterpret_cast<CuInit>(::dlsym(driver, "cuInit"));
  auto count_devices = reinterpret_cast<CuDeviceGetCount>(::dlsym(driver, "cuDeviceGetCount"));
  int count = 0;
  if (init == nullptr || count_devices == nullptr || init(0) != 0 || count_devices(&count) != 0) count = 0;
  // Not closed: the driver's threads may outlive a dlclose.
  return count;
}

// The sinfo that PATH finds, if any (looked up here: nothing is run for it).
std::optional<std::filesystem::path> sinfo_on_path() {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return std::nullopt;
  std::string_view rest(path);
  while (!rest.empty()) {
    const std::size_t colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    if (dir.empty() || dir.front() != '/') continue;  // never the current folder's
    const std::filesystem::path candidate = std::filesystem::path(dir) / "sinfo";
    if (present(candidate) && ::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

// "22.05.8" from `sinfo --version` ("slurm 22.05.8", Debian's "slurm-wlm 22.05.8"); nullopt
// without a Slurm client. Slurm 22 wants a slurm.conf even for --version, and without one looks
// for a controller in DNS: with no slurm.conf ($SLURM_CONF or the system's) it is not run and
// reads "unconfigured", as it does when it fails or says nothing within kSinfoLimit.
std::optional<std::string> slurm_client_version(ProcessLauncher& launcher) {
  const std::optional<std::filesystem::path> sinfo = sinfo_on_path();
  if (!sinfo) return std::nullopt;
  const char* conf = std::getenv("SLURM_CONF");
  if (!present(conf != nullptr && *conf != '\0' ? std::filesystem::path(conf) : "/etc/slurm/slurm.conf"))
    return "unconfigured";
  std::error_code ec;
  std::string tmpl = (std::filesystem::temp_directory_path(ec) / "batchai-sinfo-XXXXXX").string();
  if (ec) return "unconfigured";
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) return "unconfigured";
  ::close(fd);
  const std::filesystem::path out = tmpl;
  std::string version = "unconfigured";
  try {
    ProcessSpec spec;
    spec.argv = {sinfo->string(), "--version"};
    spec.stdout_file = out;
    spec.stderr_file = "/dev/null";
    const pid_t pid = launcher.spawn(spec);
    std::optional<ProcessExit> exit = launcher.wait(pid, kSinfoLimit);
    if (!exit) {
      launcher.signal_group(pid, SIGKILL);
      launcher.wait(pid, std::nullopt);
    } else if (exit->exit_code == 0) {
      std::ifstream in(out);
      std::string line;
      std::getline(in, line);
      if (line.size() > kVersionLineLimit) line.resize(kVersionLineLimit);
      for (const char* name : {"slurm-wlm ", "slurm "})
        if (line.rfind(name, 0) == 0) line.erase(0, std::strlen(name));
      if (!line.empty()) version = line;
    }
  } catch (const std::exception&) {
    version = "unconfigured";  // it could not be started
  }
  std::filesystem::remove(out, ec);
  return version;
}

}  // namespace

Json version_document(CliContext& ctx) {
  const PluginPaths& p = ctx.plugins();
  const bool trainer = present(p.trainer);
  const bool cuda = trainer && present(p.cuda);
  Json backends = {{"cpu", trainer ? Json("oneDNN, OpenBLAS") : Json(nullptr)},
                   {"cudaDevices", cuda ? cuda_device_count() : 0},
                   {"slurm", nullptr}};
  if (auto slurm = slurm_client_version(ctx.launcher())) backends["slurm"] = *slurm;
  return Json{{"batchai", batchai_version()},
              {"commit", batchai_commit()},
              {"extensions", Json::object()},
              {"plugins", {{"trainer", plugin(p.trainer)}, {"serve", plugin(p.serve)}, {"cuda", plugin(p.cuda)}}},
              {"backends", backends}};
}

std::string version_text(CliContext& ctx) {
  const Json v = version_document(ctx);
  std::ostringstream out;
  out << "batchai " << v["batchai"].get<std::string>() << " (commit " << v["commit"].get<std::string>() << ")\n";
  for (const char* name : {"trainer", "serve", "cuda"}) {
    const Json& plugin = v["plugins"][name];
    out << "plugin " << name << ": " << (plugin["present"].get<bool>() ? plugin["path"].get<std::string>() : "absent")
        << "\n";
  }
  const Json& b = v["backends"];
  out << "CPU kernels: " << (b["cpu"].is_null() ? "absent (no trainer plugin)" : b["cpu"].get<std::string>()) << "\n"
      << "CUDA devices: " << b["cudaDevices"].get<int>() << "\n"
      << "Slurm client: " << (b["slurm"].is_null() ? "absent" : b["slurm"].get<std::string>()) << "\n"
      << "serve: " << (v["plugins"]["serve"]["present"].get<bool>() ? "present" : "absent") << "\n";
  return out.str();
}

void register_version_command(CLI::App& root, CliContext& ctx) {
  add_command(root, ctx, "version", "Show the versions of batchai, its plugins and backends.")
      .example("Show the version of batchai, its plugins and backends.", "batchai version")
      .handler([&ctx](const Args&) -> std::optional<Json> { return version_document(ctx); });
}

}  // namespace batchai::cli
