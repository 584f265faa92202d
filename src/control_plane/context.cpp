// The launcher check and the trash: folders renamed away under the write lock, removed after.
#include "context.hpp"

#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"
#include "batchai/common/confined_path.hpp"

#include <algorithm>
#include "store/rows.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane {

ProcessLauncher& Context::launcher() const {
  if (launcher_ == nullptr)
    throw SystemError("This control plane was opened without a process launcher, so it cannot start or stop "
                      "processes; open it with Services{clock, launcher} (the composition root does).");
  return *launcher_;
}

namespace {

// Under the write lock each trashed folder is renamed into the .trash of its root (the shared
// folder's or the home's: a rename never crosses file systems), atomic and quick, so a concurrent
// create of the same name never loses its fresh folder.
std::vector<fs::path> move_to_bins(Store& store, const NodeLayout& layout) {
  return store.write([&] {
    const std::vector<std::string> paths = detail::trashed_folders(store);
    std::vector<fs::path> moved;
    std::error_code ec;
    for (const auto& p : paths) {
      const fs::path bin = (is_within(p, layout.shared()) ? layout.shared() : layout.home()) / ".trash";
      fs::create_directories(bin, ec);
      fs::path tomb = bin / new_uuid();
      fs::rename(p, tomb, ec);
      if (!ec) {
        moved.push_back(tomb);
      } else if (fs::exists(fs::symlink_status(p, ec))) {
        continue;  // cannot move it now (e.g. a busy mount): keep the row, retry next time
      }
      detail::untrash(store, p);
    }
    return moved;
  });
}

}  // namespace

void Context::empty_trash() const {
  std::vector<fs::path> bins = {layout_.home() / ".trash"};
  if (layout_.shared() != layout_.home()) bins.push_back(layout_.shared() / ".trash");
  const bool queued = store_.read([&] { return detail::trash_holds_any(store_); });
  std::error_code ec;
  const bool any_bin = std::any_of(bins.begin(), bins.end(), [&](const fs::path& b) { return fs::exists(b, ec); });
  if (!queued && !any_bin) return;
  const std::vector<fs::path> tombstones = move_to_bins(store_, layout_);
  for (const auto& tomb : tombstones) fs::remove_all(tomb, ec);
  for (const auto& bin : bins) {
    // Leftovers of a process killed between the rename and the removal.
    if (tombstones.empty() && fs::is_directory(bin, ec))
      for (const auto& e : fs::directory_iterator(bin, ec)) fs::remove_all(e.path(), ec);
    fs::remove(bin, ec);  // only when empty; a concurrent delete may have refilled it
  }
}

}  // namespace batchai::control_plane
