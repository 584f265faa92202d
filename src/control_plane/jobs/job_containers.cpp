// A job's containers for one run (job_containers.hpp; docs/adr/0005-job-containers.md).
#include "job_containers.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "batchai/common/confined_path.hpp"
#include "batchai/common/log.hpp"
#include "batchai/runtime/container_plan.hpp"
#include "batchai/runtime/container_settings.hpp"
#include "batchai/runtime/podman.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane::jobs_detail {
namespace {

constexpr auto kCommandTimeout = std::chrono::seconds(60);
constexpr auto kRemoveTimeout = std::chrono::seconds(30);

std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.size() > 300) line = line.substr(0, 300) + "...";
  return line.empty() ? "no message" : line;
}

std::string base64(const std::string& in) {
  static const char* kChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8) |
                       static_cast<unsigned char>(in[i + 2]);
    for (int s : {18, 12, 6, 0}) out += kChars[(v >> s) & 63];
  }
  if (i < in.size()) {
    const bool two = i + 1 < in.size();
    const unsigned v = (static_cast<unsigned char>(in[i]) << 16) | (two ? static_cast<unsigned char>(in[i + 1]) << 8 : 0u);
    out += kChars[(v >> 18) & 63];
    out += kChars[(v >> 12) & 63];
    out += two ? kChars[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// A registry auth file only this job's pull reads (mode 0600, removed after the pull).
class AuthFile {
 public:
  AuthFile(const fs::path& dir, const std::string& registry, const std::string& user, const std::string& password)
      : path_(dir / "registry-auth.json") {
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) throw SystemError("cannot write the registry auth file " + path_.string());
    const std::string text = Json{{"auths", {{registry, {{"auth", base64(user + ":" + password)}}}}}}.dump();
    const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    if (!written) throw SystemError("cannot write the registry auth file " + path_.string());
  }
  ~AuthFile() {
    std::error_code ec;
    fs::remove(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string limit_text(rlim_t v) { return v == RLIM_INFINITY ? "-1" : std::to_string(v); }

// The machine's own limits: the container's may not be above them (a root without
// CAP_SYS_RESOURCE cannot raise them, and Podman's defaults would). nproc also stays within
// kernel.pid_max: conmon, whose limits runc starts from, runs with that (seen on this machine kind).
std::vector<std::pair<std::string, std::string>> machine_ulimits() {
  std::vector<std::pair<std::string, std::string>> out;
  rlim_t pid_max = RLIM_INFINITY;
  std::ifstream("/proc/sys/kernel/pid_max") >> pid_max;
  for (auto [name, resource] : {std::pair{"nofile", RLIMIT_NOFILE}, std::pair{"nproc", RLIMIT_NPROC}}) {
    rlimit r{};
    if (::getrlimit(resource, &r) != 0) continue;
    if (resource == RLIMIT_NPROC) {
      r.rlim_cur = std::min(r.rlim_cur, pid_max);
      r.rlim_max = std::min(r.rlim_max, pid_max);
    }
    out.emplace_back(name, limit_text(r.rlim_cur) + ":" + limit_text(r.rlim_max));
  }
  return out;
}

// The shared libraries `file` needs as ldd resolves them: {name it is loaded by, file}, the
// dynamic loader under its own name.
std::vector<std::pair<std::string, fs::path>> needed_libraries(ProcessLauncher& launcher, const fs::path& file) {
  const auto listed = runtime::run_captured(launcher, {"ldd", file.string()}, kCommandTimeout);
  std::vector<std::pair<std::string, fs::path>> out;
  std::istringstream lines(listed.out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string name, arrow, path;
    words >> name >> arrow >> path;
    if (arrow == "=>" && !path.empty() && path[0] == '/') out.emplace_back(name, path);
    else if (!name.empty() && name[0] == '/') out.emplace_back(fs::path(name).filename().string(), name);  // the loader
  }
  return out;
}

// batchai itself inside any image: its executable, its plugins (beside it, or in <prefix>/lib/batchai)
// and every library they need, with the host's dynamic loader, under /.batchai; at batchai's own
// path a script that runs it through that loader, so plans that name batchai work unchanged. In
// the container the loader is /proc/self/exe: batchai finds its plugins beside it.
std::vector<runtime::Bind> batchai_bundle(ProcessLauncher& launcher, const fs::path& state_dir) {
  const fs::path self = self_executable();
  const fs::path lib_dir = fs::path(runtime::kContainerBundleDir) / "lib";
  std::vector<fs::path> files = {self};
  std::error_code ec;
  const fs::path installed = self.parent_path().parent_path() / "lib" / "batchai";
  const fs::path plugins = fs::is_directory(installed, ec) ? installed : self.parent_path();
  std::vector<runtime::Bind> binds = {{self, lib_dir / "batchai", true}};
  for (const auto& e : fs::directory_iterator(plugins, ec)) {
    if (e.path().extension() == ".so" && e.is_regular_file(ec)) {
      files.push_back(e.path());
      binds.push_back({e.path(), lib_dir / e.path().filename(), true});
    }
  }
  std::map<std::string, fs::path> libs;
  for (const auto& f : files)
    for (auto& [name, path] : needed_libraries(launcher, f)) libs.emplace(name, path);
  std::string loader;
  for (const auto& [name, path] : libs) {
    binds.push_back({path, lib_dir / name, true});
    if (name.rfind("ld-linux", 0) == 0) loader = name;
  }
  if (loader.empty()) return {{self, self, true}};  // a static batchai runs as it is
  const fs::path script = state_dir / "batchai-in-container";
  std::ofstream(script) << "#!/bin/sh\nexec " << (lib_dir / loader).string() << " --library-path " << lib_dir.string()
                        << " " << (lib_dir / "batchai").string() << " \"$@\"\n";
  fs::permissions(script, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
  binds.push_back({script, self, true});
  return binds;
}

// Where the job's mount links lead (storage folders outside the node folder): bound at the same
// paths so that the links resolve inside the container. Only targets in the shared folder's
// storage and file servers count: a link a job left in a node folder binds nothing else.
void add_link_targets(const fs::path& root, const fs::path& shared_root, std::set<fs::path>& out) {
  std::error_code ec;
  const fs::path shared = fs::weakly_canonical(shared_root, ec);
  const fs::path allowed[] = {shared / "storage", shared / "fileservers"};
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    if (it.depth() > 4) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_symlink(ec)) continue;
    const fs::path target = fs::canonical(it->path(), ec);
    const bool inside = !ec && std::any_of(std::begin(allowed), std::end(allowed),
                                           [&](const fs::path& a) { return is_within(target, a); });
    if (inside && fs::is_directory(target, ec)) out.insert(target);
    ec.clear();
  }
}

}  // namespace

std::chrono::seconds image_pull_timeout() {
  if (const char* s = std::getenv("BATCHAI_IMAGE_PULL_TIMEOUT_S"); s != nullptr && *s != '\0') {
    char* end = nullptr;
    const long v = std::strtol(s, &end, 10);
    if (end != s && *end == '\0' && v > 0 && v <= 3600) return std::chrono::seconds(v);
  }
  return std::chrono::seconds(600);
}

JobContainers::JobContainers(ProcessLauncher& launcher, fs::path state_dir, fs::path shared_root, std::string job_key,
                             const PlacedRun& run, std::string registry_password)
    : launcher_(launcher), state_dir_(std::move(state_dir)), shared_root_(std::move(shared_root)),
      job_key_(std::move(job_key)), run_(run),
      registry_password_(std::move(registry_password)) {}

std::optional<Json> JobContainers::resolve_image(std::ostream& log) {
  const runtime::ContainerSettings& c = *run_.typed.container_settings;
  const std::string qualified = runtime::qualified_image(c.image, c.server_url);
  for (const std::string& candidate : {c.image, qualified}) {
    const auto found = runtime::run_podman(launcher_, {"image", "exists", candidate}, kCommandTimeout);
    if (found.exit_code == 0) {
      image_ = candidate;
      return std::nullopt;
    }
  }
  const auto timeout = image_pull_timeout();
  const std::string registry = runtime::image_registry(qualified);
  log << "pulling image " << qualified << " (at most " << timeout.count() << " s)\n" << std::flush;
  std::optional<AuthFile> auth;
  std::vector<std::string> args = {"pull", "--quiet"};
  if (!c.username.empty()) {
    auth.emplace(state_dir_, registry, c.username, registry_password_);
    args.insert(args.end(), {"--authfile", auth->path().string()});
  }
  args.push_back(qualified);
  const auto pulled = runtime::run_podman(launcher_, args, timeout);
  if (pulled.exit_code == 0 && !pulled.timed_out) {
    image_ = qualified;
    return std::nullopt;
  }
  const std::string why = pulled.timed_out ? "no answer within " + std::to_string(timeout.count()) + " s"
                                           : first_line(pulled.err);
  return job_error("ContainerImageUnavailable",
                   "The image '" + c.image + "' is not in this machine's Podman image store and could not be pulled "
                   "from registry '" + registry + "' (" + why + "). Put it in the store of the user who runs batchai "
                   "(podman load -i IMAGE.tar, or podman pull " + qualified + " where the registry is reachable) "
                   "and submit the job again.");
}

std::optional<Json> JobContainers::start(std::ostream& log) {
  const runtime::ContainerSettings& c = *run_.typed.container_settings;
  if (!runtime::podman_available())
    return job_error("ContainerRuntimeMissing", "The job runs in the container image '" + c.image +
                                                    "', but Podman is not installed on the node: install the podman "
                                                    "package (apt-get install podman runc uidmap).");
  if (auto error = resolve_image(log)) return error;
  runtime::ContainerOptions options;
  options.job_key = job_key_;
  options.image = image_;
  if (!c.shm_size.empty()) options.shm_bytes = runtime::parse_shm_size(c.shm_size);
  options.ulimits = machine_ulimits();
  options.common_binds = batchai_bundle(launcher_, state_dir_);
  std::set<fs::path> targets;
  for (const auto& node : run_.plan.nodes) {
    add_link_targets(node.folders.mount_root, shared_root_, targets);
    add_link_targets(node.folders.job_mount_root, shared_root_, targets);
  }
  for (const auto& t : targets) options.common_binds.push_back({t, t, false});
  fs::create_directories(state_dir_ / kGatewayDir);
  fs::permissions(state_dir_ / kGatewayDir, fs::perms::owner_all);
  options.common_binds.push_back({state_dir_ / kGatewayDir, runtime::kGatewayContainerDir, false});
  // Bind sources must exist before the containers start.
  std::error_code ec;
  for (const auto& d : run_.plan.directories) fs::create_directories(d, ec);
  for (std::size_t i = 0; i < run_.plan.nodes.size(); ++i) {
    const std::string name = runtime::container_name(job_key_, run_.plan.nodes[i].id);
    names_.push_back(name);
    std::ofstream(state_dir_ / kContainersFile, std::ios::app) << name << "\n";  // before it exists: a crash leaves no stray
    const auto started = runtime::run_podman(launcher_, runtime::container_start_args(run_.plan, i, options), kCommandTimeout);
    if (started.exit_code != 0 || started.timed_out)
      return job_error("ContainerStartFailed", "The job's container on node " + run_.plan.nodes[i].id +
                                                   " did not start from image '" + image_ + "': " +
                                                   (started.timed_out ? "podman gave no answer" : first_line(started.err)));
  }
  log << "containers started from image " << image_ << ": " << names_.size() << "\n";
  return std::nullopt;
}

void JobContainers::remove() noexcept {
  if (names_.empty()) return;
  try {
    remove_recorded_containers(state_dir_);
  } catch (const std::exception& e) {
    log::warning("job " + job_key_ + ": cannot remove its containers: " + e.what());
  }
  names_.clear();
}

runtime::GatewayOptions JobContainers::gateway_options() const {
  runtime::GatewayOptions o;
  o.dir = state_dir_ / kGatewayDir;
  for (std::size_t i = 0; i < names_.size(); ++i) o.containers[runtime::container_host(i)] = names_[i];
  o.podman_base = runtime::podman_base();
  o.env = node_base_environment();
  o.log = run_.plan.stdouterr_dir / "stderr.txt";
  return o;
}

void remove_recorded_containers(const fs::path& state_dir) {
  const fs::path file = state_dir / kContainersFile;
  std::ifstream in(file);
  if (!in) return;
  std::vector<std::string> args = {"rm", "--force", "--ignore", "--time", "0"};
  std::string name;
  const std::size_t fixed = args.size();
  while (std::getline(in, name)) {
    if (!name.empty()) args.push_back(name);
  }
  auto launcher = make_posix_process_launcher();
  if (args.size() > fixed) {
    const auto removed = runtime::run_podman(*launcher, args, kRemoveTimeout);
    if (removed.exit_code != 0 || removed.timed_out) {
      log::warning("podman rm of the job's containers failed: " + first_line(removed.err));
      return;  // the file stays: the next end of the job's processes tries again
    }
  }
  std::error_code ec;
  fs::remove(file, ec);
}

}  // namespace batchai::control_plane::jobs_detail
