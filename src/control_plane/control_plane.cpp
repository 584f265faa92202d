// ControlPlane construction, settings from the environment, the reconcile driver and the trash.
#include "batchai/control_plane/control_plane.hpp"

#include <sys/stat.h>

#include <cstdlib>

#include "batchai/common/ids.hpp"
#include "batchai/common/log.hpp"
#include "store.hpp"
#include "internal.hpp"
#include "slurm_reconcile.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane {

using namespace detail;

Settings Settings::from_environment() {
  Settings s;
  if (const char* home = std::getenv("BATCHAI_HOME"); home && *home) {
    s.home = home;
  } else {
    s.home = fs::path(user_home()) / ".batchai";
  }
  if (const char* delay = std::getenv("BATCHAI_SIM_DELAY_S"); delay && *delay) {
    char* end = nullptr;
    double seconds = std::strtod(delay, &end);
    if (end == delay || seconds < 0)
      throw InvalidArgument(std::string("BATCHAI_SIM_DELAY_S must be a number of seconds >= 0, got '") + delay + "'");
    s.provisioning_delay = Micros(static_cast<long long>(seconds * 1e6));
    s.node_preparation_delay = s.provisioning_delay;
  }
  return s;
}

ControlPlane::ControlPlane(Settings settings, std::shared_ptr<Store> store, Services services)
    : settings_(std::move(settings)),
      store_(std::move(store)),
      clock_(std::move(services.clock)),
      layout_(settings_.home),
      launcher_(std::move(services.launcher)) {}

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
  auto store = Store::open(settings.home / "state.db");
  return std::make_unique<ControlPlane>(std::move(settings), std::move(store), std::move(services));
}

ProcessLauncher& ControlPlane::launcher() {
  if (!launcher_)
    throw SystemError("This control plane was opened without a process launcher, so it cannot start or stop "
                      "processes; open it with Services{clock, launcher} (the composition root does).");
  return *launcher_;
}

void ControlPlane::reconcile() { reconcile(std::vector<std::int64_t>{}); }

void ControlPlane::reconcile(const std::vector<std::int64_t>& slurm_clusters) {
  ++reconciles_;
  const std::int64_t now = to_us(clock_->now());
  // A cheap read first: most commands find nothing pending and never take the write lock.
  bool pending = store_->read([&] {
    auto st = store_->prepare(
        "SELECT EXISTS(SELECT 1 FROM clusters WHERE pending = 1) OR EXISTS(SELECT 1 FROM file_servers WHERE "
        "pending = 1) OR EXISTS(SELECT 1 FROM trash)");
    return st.step() && st.integer(0) != 0;
  });
  if (pending) {
    file_servers_.reconcile(now);
    nodes_.reconcile(now);
    empty_trash();
  }
  reconcile_slurm(*this, slurm_clusters);  // bounded; nothing for a command that touches no Slurm cluster
  jobs_.schedule();
}

void ControlPlane::empty_trash() {
  // Under the write lock each trashed folder is renamed into $BATCHAI_HOME/.trash (atomic and
  // quick), so a concurrent create of the same name never loses its fresh folder; the slow
  // removal happens after commit.
  const fs::path bin = settings_.home / ".trash";
  std::error_code bin_ec;
  bool queued = store_->read([&] {
    auto st = store_->prepare("SELECT EXISTS(SELECT 1 FROM trash)");
    return st.step() && st.integer(0) != 0;
  });
  if (!queued && !fs::exists(bin, bin_ec)) return;
  std::vector<fs::path> tombstones = store_->write([&] {
    std::vector<std::string> paths;
    {
      auto st = store_->prepare("SELECT path FROM trash");
      while (st.step()) paths.push_back(st.text(0));
    }
    std::vector<fs::path> moved;
    std::error_code ec;
    if (!paths.empty()) fs::create_directories(bin, ec);
    for (const auto& p : paths) {
      fs::path tomb = bin / new_uuid();
      fs::rename(p, tomb, ec);
      if (!ec) {
        moved.push_back(tomb);
      } else if (fs::exists(fs::symlink_status(p, ec))) {
        continue;  // cannot move it now (e.g. a busy mount): keep the row, retry next time
      }
      store_->prepare("DELETE FROM trash WHERE path = ?").bind(1, p).run();
    }
    return moved;
  });
  for (const auto& tomb : tombstones) {
    std::error_code ec;
    fs::remove_all(tomb, ec);
  }
  if (!tombstones.empty()) fs::remove(bin, bin_ec);  // only when empty
  // Leftovers of a process killed between the rename and the removal.
  std::error_code ec;
  if (tombstones.empty() && fs::is_directory(bin, ec)) {
    for (const auto& e : fs::directory_iterator(bin, ec)) fs::remove_all(e.path(), ec);
    fs::remove(bin, ec);  // only when empty; a concurrent delete may have refilled it
  }
}

}  // namespace batchai::control_plane
