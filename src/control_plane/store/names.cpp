// Names of every table for completion (batchai/control_plane/stored_names.hpp): read-only, through
// Store::open_reader.
#include <map>

#include "batchai/control_plane/stored_names.hpp"
#include "store/store.hpp"

namespace batchai::control_plane {
namespace {

constexpr int kBusyTimeoutMs = 20;  // a busy store completes nothing rather than keep a <TAB> waiting

// The rows of each kind, as "FROM ... WHERE": ?1..?3 the lower-cased group, workspace and
// experiment, ?4 and ?5 the range of lower-cased names that start with the prefix; `t` is the
// kind's table. Its UNIQUE(parent, name_lc) index (the primary key for groups) serves the range.
struct Query {
  const char* rows;
  int parents;
  const char* display = "t.name";  // the name as created (storage accounts have lower case only)
};
const std::map<std::string, Query, std::less<>>& queries() {
  static const std::map<std::string, Query, std::less<>> kQueries = {
      {"groups", {"FROM resource_groups t WHERE t.name_lc >= ?4 AND t.name_lc < ?5", 0}},
      {"storage-accounts", {"FROM storage_accounts t WHERE t.name_lc >= ?4 AND t.name_lc < ?5", 0, "t.name_lc"}},
      {"workspaces", {"FROM workspaces t WHERE t.rg_lc = ?1 AND t.name_lc >= ?4 AND t.name_lc < ?5", 1}},
      {"experiments",
       {"FROM experiments t WHERE t.workspace_id = (SELECT id FROM workspaces WHERE rg_lc = ?1 AND name_lc = ?2) "
        "AND t.name_lc >= ?4 AND t.name_lc < ?5",
        2}},
      {"clusters",
       {"FROM clusters t WHERE t.workspace_id = (SELECT id FROM workspaces WHERE rg_lc = ?1 AND name_lc = ?2) "
        "AND t.name_lc >= ?4 AND t.name_lc < ?5",
        2}},
      {"file-servers",
       {"FROM file_servers t WHERE t.workspace_id = (SELECT id FROM workspaces WHERE rg_lc = ?1 AND name_lc = ?2) "
        "AND t.name_lc >= ?4 AND t.name_lc < ?5",
        2}},
      {"jobs",
       {"FROM jobs t WHERE t.experiment_id = (SELECT e.id FROM experiments e JOIN workspaces w ON e.workspace_id = "
        "w.id WHERE w.rg_lc = ?1 AND w.name_lc = ?2 AND e.name_lc = ?3) AND t.name_lc >= ?4 AND t.name_lc < ?5",
        3}},
  };
  return kQueries;
}

std::string ascii_lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

}  // namespace

std::optional<int> stored_name_parents(std::string_view kind) {
  const auto it = queries().find(kind);
  if (it == queries().end()) return std::nullopt;
  return it->second.parents;
}

std::vector<std::string> stored_names(const std::filesystem::path& db, std::string_view kind,
                                      const std::vector<std::string>& parents, const std::string& prefix,
                                      std::size_t display_limit) {
  const auto query = queries().find(kind);
  if (query == queries().end() || static_cast<int>(parents.size()) < query->second.parents) return {};
  std::vector<std::string> names;
  try {
    auto store = Store::open_reader(db, kBusyTimeoutMs);
    const std::string lower = ascii_lower(prefix);
    const std::string end = lower + '\x7f';  // above every printable name that starts with `lower`
    // The lower-cased keys first, which the index alone answers; when there are at most
    // display_limit, the names as they were created instead (nobody reads 10,000 words, and every
    // command takes a name in any case).
    for (const bool display : {false, true}) {
      if (display && names.size() > display_limit) break;
      auto st = store->prepare(std::string("SELECT ") + (display ? query->second.display : "t.name_lc") + " " +
                               query->second.rows + " ORDER BY t.name_lc");
      for (int i = 0; i < query->second.parents; ++i) st.bind(i + 1, parents[static_cast<std::size_t>(i)]);
      st.bind(4, lower).bind(5, end);
      names.clear();
      while (st.step()) names.push_back(st.text(0));
    }
  } catch (const std::exception&) {
    return {};  // no store, an older one, or a writer holding it: nothing to complete
  }
  return names;
}

}  // namespace batchai::control_plane
