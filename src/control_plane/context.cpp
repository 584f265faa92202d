// The launcher check and the trash: folders renamed away under the write lock, removed after.
#include "context.hpp"

#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"
#include "store.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane {

ProcessLauncher& Context::launcher() const {
  if (launcher_ == nullptr)
    throw SystemError("This control plane was opened without a process launcher, so it cannot start or stop "
                      "processes; open it with Services{clock, launcher} (the composition root does).");
  return *launcher_;
}

namespace {

// Under the write lock each trashed folder is renamed into $BATCHAI_HOME/.trash (atomic and
// quick), so a concurrent create of the same name never loses its fresh folder.
std::vector<fs::path> move_to_bin(Store& store, const fs::path& bin) {
  return store.write([&] {
    std::vector<std::string> paths;
    {
      auto st = store.prepare("SELECT path FROM trash");
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
      store.prepare("DELETE FROM trash WHERE path = ?").bind(1, p).run();
    }
    return moved;
  });
}

}  // namespace

void Context::empty_trash() const {
  const fs::path bin = settings_.home / ".trash";
  std::error_code bin_ec;
  bool queued = store_.read([&] {
    auto st = store_.prepare("SELECT EXISTS(SELECT 1 FROM trash)");
    return st.step() && st.integer(0) != 0;
  });
  if (!queued && !fs::exists(bin, bin_ec)) return;
  const std::vector<fs::path> tombstones = move_to_bin(store_, bin);
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
