// The store's names for completion (completion_names.hpp). SQL over the control plane's tables,
// read-only: a completion never writes, never waits long for a writer (a busy store completes
// nothing) and prints only names a shell can take as words.
#include "completion_names.hpp"

#include <sqlite3.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "batchai/control_plane/control_plane.hpp"

namespace batchai::cli {
namespace {

constexpr int kBusyTimeoutMs = 20;
constexpr std::size_t kMaxArgument = 1024;  // longer than any valid name: nothing to complete
constexpr std::size_t kDisplayLimit = 1000;

// The rows of each kind, as "FROM ... WHERE": ?1..?3 the lower-cased group, workspace and
// experiment, ?4 and ?5 the range of lower-cased names that start with the prefix; `t` is the
// kind's table. Its UNIQUE(parent, name_lc) index (the primary key for groups) serves the range.
struct Query {
  const char* rows;
  int parents;
  const char* display = "t.name";  // the name as created (storage accounts have lower case only)
};
const std::map<std::string, Query>& queries() {
  static const std::map<std::string, Query> kQueries = {
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

// A name the shell can offer as one word: printable ASCII, no blank, quote, backslash, expansion
// or glob character (the completion splits the output on newlines, unquoted).
bool shell_word(const std::string& name) {
  if (name.empty()) return false;
  for (unsigned char c : name)
    if (c <= ' ' || c >= 0x7f || std::strchr("'\"\\`$*?[]{}~!&;|<>()", c) != nullptr) return false;
  return true;
}

std::filesystem::path store_file() {
  try {
    return control_plane::Settings::from_environment().home / "state.db";
  } catch (const std::exception&) {
    return {};  // a malformed setting: nothing to complete
  }
}

}  // namespace

int complete_names(int argc, char** argv) {
  if (argc < 4) return 2;
  auto query = queries().find(argv[2]);
  if (query == queries().end()) return 2;
  const std::string prefix = argv[3];
  std::vector<std::string> parents;
  for (int i = 4; i < argc; ++i) parents.emplace_back(ascii_lower(argv[i]));
  const int needed = query->second.parents;
  if (static_cast<int>(parents.size()) < needed || prefix.size() > kMaxArgument) return 0;
  for (int i = 0; i < needed; ++i)
    if (parents[static_cast<std::size_t>(i)].empty() || parents[static_cast<std::size_t>(i)].size() > kMaxArgument) return 0;

  const std::filesystem::path db = store_file();
  std::error_code ec;
  if (db.empty() || !std::filesystem::is_regular_file(db, ec)) return 0;
  sqlite3* handle = nullptr;
  if (sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    sqlite3_close(handle);
    return 0;
  }
  sqlite3_busy_timeout(handle, kBusyTimeoutMs);
  // The store's lower-cased keys first, which the index alone answers; when there are at most
  // kDisplayLimit, the names as they were created instead (nobody reads 10,000 words, and every
  // command takes a name in any case).
  const std::string lower = ascii_lower(prefix);
  std::string out;
  std::size_t count = 0;
  for (const bool display : {false, true}) {
    if (display && count > kDisplayLimit) break;
    std::string sql = std::string("SELECT ") + (display ? query->second.display : "t.name_lc") + " " +
                      query->second.rows + " ORDER BY t.name_lc";
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(handle, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
      sqlite3_finalize(st);
      break;
    }
    for (int i = 0; i < needed; ++i)
      sqlite3_bind_text(st, i + 1, parents[static_cast<std::size_t>(i)].c_str(), -1, SQLITE_TRANSIENT);
    const std::string end = lower + '\x7f';  // above every printable name that starts with `lower`
    sqlite3_bind_text(st, 4, lower.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 5, end.c_str(), -1, SQLITE_TRANSIENT);
    out.clear();
    count = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
      ++count;
      if (text == nullptr) continue;
      std::string name(text);
      if (shell_word(name)) out += name + "\n";
    }
    sqlite3_finalize(st);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  sqlite3_close(handle);
  return 0;
}

}  // namespace batchai::cli
