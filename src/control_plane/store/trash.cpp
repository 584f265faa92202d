// The trash table: folders to delete once the transaction that let go of them committed (store/rows.hpp).
#include "store/rows.hpp"

namespace batchai::control_plane::detail {

void trash(Store& store, const std::filesystem::path& folder) {
  store.prepare("INSERT OR IGNORE INTO trash(path) VALUES (?)").bind(1, folder.string()).run();
}

std::vector<std::string> trashed_folders(Store& store) {
  auto st = store.prepare("SELECT path FROM trash");
  std::vector<std::string> out;
  while (st.step()) out.push_back(st.text(0));
  return out;
}

void untrash(Store& store, const std::filesystem::path& folder) {
  store.prepare("DELETE FROM trash WHERE path = ?").bind(1, folder.string()).run();
}

bool trash_holds_any(Store& store) {
  auto st = store.prepare("SELECT EXISTS(SELECT 1 FROM trash)");
  return st.step() && st.integer(0) != 0;
}

}  // namespace batchai::control_plane::detail
