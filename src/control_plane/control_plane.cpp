// The control plane's composition root: settings read once from the environment, then the
// context, the engines (one engine per kind of cluster), the rules they share, the scheduler
// and the reconciler, made before the services that receive them.
#include "batchai/control_plane/control_plane.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <pwd.h>
#include <unistd.h>

#include "auto_storage.hpp"
#include "batchai/common/log.hpp"
#include "cluster_docs.hpp"
#include "context.hpp"
#include "engine/cluster_engine.hpp"
#include "engine/simulated/simulated_engine.hpp"
#include "engine/slurm/slurm_engine.hpp"
#include "engine/slurm/slurm_runner.hpp"
#include "store/rows.hpp"
#include "jobs/job_ending.hpp"
#include "jobs/scheduler.hpp"
#include "jobs/supervisor.hpp"
#include "reconciler.hpp"
#include "store/store.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane {

using namespace detail;

namespace {

std::string env_text(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

std::string os_user_name() {
  if (const char* u = std::getenv("USER"); u && *u) return u;
  if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_name) return pw->pw_name;
  return "azureuser";
}

std::string os_user_home() {
  if (const char* h = std::getenv("HOME"); h && *h) return h;
  if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_dir) return pw->pw_dir;
  return ".";
}

// Others must not change the home (they could replace state.db, whose job documents the
// supervisors run) and should not read it (job output, shares, secrets in the store): a home
// others can write is refused, one they can read is warned about, as ssh does with keys.
void check_home_mode(const fs::path& home) {
  struct stat st {};
  if (::stat(home.c_str(), &st) != 0) return;  // the store's open says what is wrong
  const unsigned mode = st.st_mode & 07777;
  char octal[8];
  std::snprintf(octal, sizeof octal, "%04o", mode);
  const std::string fix = "Run: chmod 700 '" + home.string() + "'";
  if ((mode & (S_IWGRP | S_IWOTH)) != 0)
    throw SystemError("BATCHAI_HOME '" + home.string() + "' has mode " + octal +
                      ": other users can write it (and replace its state and job documents), so batchai refuses "
                      "to use it. " + fix + ".");
  if ((mode & (S_IRGRP | S_IROTH | S_IXGRP | S_IXOTH)) != 0)
    log::warning("BATCHAI_HOME '" + home.string() + "' has mode " + octal +
                 ": other users can read job output, shares and logs there. " + fix + " to keep them private.");
}

}  // namespace

Settings Settings::from_environment() {
  Settings s;
  s.user_name = os_user_name();
  s.user_home = os_user_home();
  const std::string home = env_text("BATCHAI_HOME");
  s.home = home.empty() ? s.user_home / ".batchai" : fs::path(home);
  if (const std::string shared = env_text("BATCHAI_SHARED_DIR"); !shared.empty()) {
    if (!fs::path(shared).is_absolute())
      throw InvalidArgument("BATCHAI_SHARED_DIR must be an absolute path (the same on every node), got '" + shared + "'.");
    s.shared = shared;
  }
  if (const std::string delay = env_text("BATCHAI_SIM_DELAY_S"); !delay.empty()) {
    char* end = nullptr;
    double seconds = std::strtod(delay.c_str(), &end);
    if (end == delay.c_str() || seconds < 0)
      throw InvalidArgument("BATCHAI_SIM_DELAY_S must be a number of seconds >= 0, got '" + delay + "'");
    s.provisioning_delay = Micros(static_cast<long long>(seconds * 1e6));
    s.node_preparation_delay = s.provisioning_delay;
  }
  if (const std::string containment = env_text("BATCHAI_CONTAINMENT"); !containment.empty()) s.containment = containment;
  if (const std::string conf = env_text("SLURM_CONF"); !conf.empty()) s.slurm_conf = conf;
  return s;
}

// What the services are given, made in dependency order.
struct Parts {
  Parts(const Settings& settings, Store& store, const Clock& clock, ProcessLauncher* launcher)
      : cx(settings, store, clock, launcher),
        docs(cx, engines),
        scheduler(cx, engines, docs),
        reconciler(cx, engines, docs, scheduler),
        ending(cx, engines, docs) {
    engines.add(std::make_unique<simulated::SimulatedEngine>(cx, docs));
    engines.add(std::make_unique<detail::SlurmEngine>(cx, settings.slurm_conf));
  }
  Context cx;
  Engines engines;
  ClusterDocs docs;
  Scheduler scheduler;
  Reconciler reconciler;
  JobEnding ending;
};

ControlPlane::ControlPlane(Settings settings, std::shared_ptr<Store> store, Services services)
    : settings_(std::move(settings)),
      store_(std::move(store)),
      clock_(std::move(services.clock)),
      launcher_(std::move(services.launcher)),
      parts_(std::make_unique<Parts>(settings_, *store_, *clock_, launcher_.get())),
      groups_(parts_->cx, parts_->reconciler, parts_->ending),
      storage_accounts_(parts_->cx),
      storage_(parts_->cx),
      auto_storage_(std::make_unique<AutoStorage>(parts_->cx, groups_, storage_accounts_, storage_)),
      workspaces_(parts_->cx, parts_->reconciler, parts_->ending),
      experiments_(parts_->cx, parts_->reconciler, parts_->ending),
      clusters_(parts_->cx, parts_->reconciler, parts_->engines, parts_->docs, parts_->ending, *auto_storage_),
      nodes_(parts_->cx, parts_->reconciler, parts_->engines),
      file_servers_(parts_->cx, parts_->reconciler),
      jobs_(parts_->cx, parts_->reconciler, parts_->engines, parts_->docs, parts_->scheduler) {}

ControlPlane::~ControlPlane() = default;

std::unique_ptr<ControlPlane> ControlPlane::open(Settings settings, std::shared_ptr<Clock> clock) {
  return open(std::move(settings), Services{std::move(clock), nullptr});
}

std::unique_ptr<ControlPlane> ControlPlane::open(Settings settings, Services services) {
  std::error_code ec;
  bool fresh = !fs::exists(settings.home, ec);
  fs::create_directories(settings.home, ec);
  if (ec) throw SystemError("Cannot create BATCHAI_HOME '" + settings.home.string() + "': " + ec.message());
  if (fresh) ::chmod(settings.home.c_str(), 0700);
  check_home_mode(settings.home);
  auto store = Store::open(settings.home / "state.db");
  return std::make_unique<ControlPlane>(std::move(settings), std::move(store), std::move(services));
}

bool ControlPlane::state_read_only() const { return store_->read_only(); }

int ControlPlane::supervise(const std::string& job_key) {
  // A supervisor lives as long as its job and must record it: a store that opened read-only on a
  // full disk would refuse every write for that whole time, so it stops here as open() used to.
  if (state_read_only())
    throw StateDiskFull("Cannot supervise the job: the state database cannot be written, the disk is full. "
                        "Free space where $BATCHAI_HOME is.");
  return Supervisor(parts_->cx, parts_->reconciler, parts_->scheduler, parts_->docs).run(job_key);
}

int run_in_slurm_allocation(const Settings& settings, const Services& services, const std::string& job_key,
                            SlurmRunStep step) {
  if (!services.clock || !services.launcher) throw SystemError("The Slurm runner needs a clock and a process launcher.");
  const jobs_detail::RunnerHost host{NodeLayout(settings.shared_dir()), *services.clock, *services.launcher,
                                     settings.containment};
  return step == SlurmRunStep::kCleanUp ? jobs_detail::clean_up_slurm_run(host, job_key)
                                        : jobs_detail::run_in_slurm_allocation(host, job_key);
}

void ControlPlane::reconcile() { parts_->reconciler.reconcile(); }
void ControlPlane::reconcile(const ClusterScope& scope) { parts_->reconciler.reconcile(scope); }
std::uint64_t ControlPlane::reconcile_count() const { return parts_->reconciler.count(); }
const NodeLayout& ControlPlane::layout() const { return parts_->cx.layout(); }
ProcessLauncher& ControlPlane::launcher() { return parts_->cx.launcher(); }
void ControlPlane::empty_trash() { parts_->cx.empty_trash(); }
const Engines& ControlPlane::engines() const { return parts_->engines; }

}  // namespace batchai::control_plane
