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

#include "batchai/common/clock.hpp"
#include "batchai/common/confined_path.hpp"
#include "batchai/common/log.hpp"
#include "batchai/control_plane/jobs.hpp"
#include "batchai/control_plane/node_layout.hpp"
#include "batchai/runtime/container_bundle.hpp"
#include "batchai/runtime/container_plan.hpp"
#include "batchai/runtime/container_settings.hpp"
#include "batchai/runtime/podman.hpp"
#include "job_processes.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane::jobs_detail {
namespace {

constexpr auto kCommandTimeout = std::chrono::seconds(60);
constexpr auto kRemoveTimeout = std::chrono::seconds(30);
constexpr const char* kInstallPodman =
    "install the podman package and runc there (Debian: apt-get install podman runc uidmap; docs/slurm.md), or "
    "remove containerSettings to run the job on the host.";

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

fs::path containers_record(const NodeLayout& layout, const std::string& job_key) {
  return layout.home() / "containers" / job_key;
}

JobContainers::JobContainers(ProcessLauncher& launcher, fs::path state_dir, fs::path shared_root, fs::path record,
                             std::string job_key, const PlacedRun& run, std::string registry_password,
                             std::vector<runtime::PodmanRoute> routes)
    : launcher_(launcher), state_dir_(std::move(state_dir)), shared_root_(std::move(shared_root)),
      record_(std::move(record)), job_key_(std::move(job_key)), run_(run),
      registry_password_(std::move(registry_password)), routes_(std::move(routes)) {}

runtime::PodmanRoute JobContainers::route(std::size_t node) const {
  return node < routes_.size() ? routes_[node] : runtime::PodmanRoute{};
}

std::string JobContainers::where(std::size_t node) const {
  return route(node).prefix.empty() ? "this machine" : where_named(node);
}

std::string JobContainers::where_named(std::size_t node) const { return "node " + run_.plan.nodes.at(node).id; }

std::optional<Json> JobContainers::resolve_image(std::size_t node, std::ostream& log, const std::function<bool()>& stopped) {
  const runtime::ContainerSettings& c = *run_.typed.container_settings;
  const std::string qualified = runtime::qualified_image(c.image, c.server_url);
  for (const std::string& candidate : {c.image, qualified}) {
    if (runtime::run_podman_on(launcher_, route(node), {"image", "exists", candidate}, kCommandTimeout).exit_code == 0) {
      image_ = candidate;
      return std::nullopt;
    }
  }
  const auto timeout = image_pull_timeout();
  const std::string registry = runtime::image_registry(qualified);
  log << "pulling image " << qualified << " on " << where(node) << " (at most " << timeout.count() << " s)\n"
      << std::flush;
  std::optional<AuthFile> auth;
  std::vector<std::string> args = {"pull", "--quiet"};
  if (!c.username.empty()) {
    auth.emplace(state_dir_, registry, c.username, registry_password_);
    args.insert(args.end(), {"--authfile", auth->path().string()});
  }
  args.push_back(qualified);
  const auto pulled = runtime::run_podman_on(launcher_, route(node), args, timeout, stopped);
  if (pulled.cancelled) return job_error("JobTerminated", "The job was stopped while its image was pulled.");
  if (pulled.exit_code == 0 && !pulled.timed_out) {
    image_ = qualified;
    return std::nullopt;
  }
  const std::string why = pulled.timed_out ? "no answer within " + std::to_string(timeout.count()) + " s"
                                           : first_line(pulled.err);
  return job_error("ContainerImageUnavailable",
                   "The image '" + c.image + "' is not in the Podman image store of " + where(node) +
                       " and could not be pulled from registry '" + registry + "' (" + why +
                       "). Put it in the store of the user who runs batchai (podman load -i IMAGE.tar, or podman "
                       "pull " + qualified + " where the registry is reachable) and submit the job again.");
}

std::vector<std::size_t> JobContainers::start_all(const runtime::ContainerOptions& options, std::string& why) {
  const std::size_t n = run_.plan.nodes.size();
  std::vector<std::size_t> first_round, second_round, failed;
  for (std::size_t i = 0; i < n; ++i) (options.share_host && i > 0 ? second_round : first_round).push_back(i);
  for (const auto* round : {&first_round, &second_round}) {
    if (round->empty() || !failed.empty()) continue;
    std::vector<std::pair<runtime::PodmanRoute, std::vector<std::string>>> commands;
    for (auto i : *round) commands.emplace_back(route(i), runtime::container_start_args(run_.plan, i, options));
    const auto results = runtime::run_podman_all(launcher_, commands, kCommandTimeout);
    for (std::size_t k = 0; k < results.size(); ++k) {
      if (results[k].exit_code == 0 && !results[k].timed_out) continue;
      if (failed.empty())
        why = "on node " + run_.plan.nodes[(*round)[k]].id + ": " +
              (results[k].timed_out ? std::string("podman gave no answer") : first_line(results[k].err));
      failed.push_back((*round)[k]);
    }
  }
  return failed;
}

// One node of each machine among `nodes`: where the image is looked for (and pulled).
std::vector<std::size_t> JobContainers::one_per_machine(const std::vector<std::size_t>& nodes) const {
  std::vector<std::size_t> out;
  for (auto i : nodes)
    if (std::none_of(out.begin(), out.end(), [&](std::size_t o) { return route(o) == route(i); })) out.push_back(i);
  return out;
}

std::optional<Json> JobContainers::start(std::ostream& log, const std::function<bool()>& stopped) {
  const runtime::ContainerSettings& c = *run_.typed.container_settings;
  if (!runtime::podman_available()) {
    // This machine is the node whose podman commands run here (a Slurm job's first node).
    std::size_t here = 0;
    while (here + 1 < run_.plan.nodes.size() && !route(here).prefix.empty()) ++here;
    return job_error("ContainerRuntimeMissing",
                     "The job runs in the container image '" + c.image + "', but Podman ('" + runtime::podman_program() +
                         "') is not installed on " + (routes_.empty() ? "the node" : where_named(here)) + ": " +
                         kInstallPodman);
  }
  // A previous run of the job (requeued) that left its containers: the names are taken again.
  if (fs::exists(record_) && !remove_job_containers(record_, job_key_, routes_))
    return job_error("ContainerStartFailed", "The containers of the job's previous run could not be removed.");
  runtime::ContainerOptions options;
  options.job_key = job_key_;
  if (!c.shm_size.empty()) options.shm_bytes = runtime::parse_shm_size(c.shm_size);
  options.ulimits = machine_ulimits();
  // The ranks of an MPI job see the nodes of this machine as one host, as on the host (nodes on
  // other hosts are hosts of their own).
  const bool all_here = std::all_of(routes_.begin(), routes_.end(), [](const auto& r) { return r.prefix.empty(); });
  options.share_host = all_here && !run_.plan.rank_nodes_contents.empty() && run_.plan.nodes.size() > 1;
  fs::create_directories(record_.parent_path());
  options.common_binds = runtime::batchai_bundle(launcher_, state_dir_, record_.parent_path() / ".batchai-libraries.json");
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
  for (const auto& node : run_.plan.nodes) names_.push_back(runtime::container_name(job_key_, node.id));
  auto write_record = [this] {  // before any exists: a crash leaves no stray unlisted
    std::ofstream record(record_, std::ios::trunc);
    for (const auto& name : names_) record << name << "\n";
    return static_cast<bool>(record.flush());
  };
  if (!write_record()) return job_error("ContainerStartFailed", "Cannot record the job's containers in " + record_.string());
  // The image as given, straight from the local store (--pull=never); only where that fails is
  // the store asked, and the image pulled when it lacks it.
  image_ = c.image;
  options.image = image_;
  std::string why;
  auto failed = start_all(options, why);
  if (!failed.empty()) {
    std::vector<std::size_t> lacking;
    for (auto i : one_per_machine(failed)) {
      if (!route(i).prefix.empty()) {
        const auto version = runtime::run_podman_on(launcher_, route(i), {"--version"}, kCommandTimeout);
        if (version.exit_code != 0 || version.timed_out)
          return job_error("ContainerRuntimeMissing",
                           "The job runs in the container image '" + c.image + "', but " + where(i) +
                               " cannot run Podman (" + (version.timed_out ? "no answer" : first_line(version.err)) +
                               "): " + kInstallPodman);
      }
      if (runtime::run_podman_on(launcher_, route(i), {"image", "exists", c.image}, kCommandTimeout).exit_code != 0)
        lacking.push_back(i);
    }
    if (lacking.empty())
      return job_error("ContainerStartFailed", "The job's container did not start from image '" + image_ + "' " + why);
    if (!remove_job_containers(record_, job_key_, routes_) || !write_record())
      return job_error("ContainerStartFailed", "The job's containers could not be removed after a failed start.");
    for (auto i : lacking)
      if (auto error = resolve_image(i, log, stopped)) return error;
    options.image = image_;
    if (!start_all(options, why).empty())
      return job_error("ContainerStartFailed", "The job's container did not start from image '" + image_ + "' " + why);
  }
  log << format_iso(std::chrono::time_point_cast<std::chrono::microseconds>(std::chrono::system_clock::now()))
      << " containers started from image " << image_ << ": " << names_.size() << "\n";
  return std::nullopt;
}

runtime::GatewayOptions JobContainers::gateway_options() const {
  runtime::GatewayOptions o;
  o.dir = state_dir_ / kGatewayDir;
  o.podman_base = runtime::podman_base();
  o.env = node_base_environment();
  for (std::size_t i = 0; i < names_.size(); ++i) {
    const std::string host = runtime::container_host(i);
    o.containers[host] = names_[i];
    const auto r = route(i);
    if (!r.prefix.empty()) o.prefixes[host] = r.prefix;
    for (const auto& [name, value] : r.env) o.env[name] = value;
  }
  o.log = run_.plan.stdouterr_dir / "stderr.txt";
  return o;
}

bool remove_job_containers(const fs::path& record, const std::string& job_key,
                           const std::vector<runtime::PodmanRoute>& routes) noexcept {
  try {
    std::error_code ec;
    if (!fs::exists(record, ec)) return true;
    std::vector<runtime::PodmanRoute> machines;
    for (const auto& r : routes)
      if (std::find(machines.begin(), machines.end(), r) == machines.end()) machines.push_back(r);
    if (machines.empty()) machines.emplace_back();
    // By the label, so that every container of the job goes, listed or not; --depend takes the
    // ones that joined another's namespaces first.
    const std::vector<std::string> rm = {"rm", "--force", "--depend", "--ignore", "--time", "0", "--filter",
                                         "label=" + std::string(runtime::kContainerJobLabel) + "=" + job_key};
    auto launcher = make_posix_process_launcher();
    std::vector<std::pair<runtime::PodmanRoute, std::vector<std::string>>> commands;
    for (const auto& m : machines) commands.emplace_back(m, rm);
    bool removed = false;
    std::string why;
    // Twice: a removal running at the same time (the sweep, a delete) can make one fail on the
    // container the others joined; the second finds them gone.
    for (int attempt = 0; attempt < 2 && !removed; ++attempt) {
      removed = true;
      for (const auto& result : runtime::run_podman_all(*launcher, commands, kRemoveTimeout)) {
        if (result.exit_code == 0 && !result.timed_out) continue;
        why = result.timed_out ? "no answer" : first_line(result.err);
        removed = false;
      }
    }
    // The record stays when they did not go: the next end of the job's processes, or the sweep, tries again.
    if (!removed) log::warning("job " + job_key + ": podman rm of its containers failed: " + why);
    if (removed) fs::remove(record, ec);
    return removed;
  } catch (const std::exception& e) {
    log::warning("job " + job_key + ": cannot remove its containers: " + e.what());
    return false;
  }
}

void sweep_ended_jobs_containers(const NodeLayout& layout, const std::function<bool(const std::string&)>& running) {
  // The sweep runs inside every command's reconcile: it removes at most one job's containers per
  // call, and a record whose removal failed is set aside (its time moved into the future) for
  // kSweepBackoff, so a Podman that hangs or fails costs a command one bounded try, not one per
  // stray on every command.
  constexpr auto kSweepBackoff = std::chrono::minutes(5);
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (const auto& e : fs::directory_iterator(layout.home() / "containers", ec)) {
    const std::string key = e.path().filename().string();
    // A live supervisor removes its job's own (it holds the lock until they are gone).
    if (!is_job_key(key) || e.last_write_time(ec) > now || supervisor_alive(layout, key) || running(key)) continue;
    if (!remove_job_containers(e.path(), key)) fs::last_write_time(e.path(), now + kSweepBackoff, ec);
    return;
  }
}

}  // namespace batchai::control_plane::jobs_detail
