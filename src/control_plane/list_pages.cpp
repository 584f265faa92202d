// The services' list_page() (list_page.hpp): each list's query with a keyset condition on its
// ORDER BY key and LIMIT limit + 1 (the extra row only says whether another page follows).
// Each entry point reconciles as its list() does; the documents are the ones list() returns.
#include <cstdint>
#include <limits>

#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"
#include "batchai/control_plane/clusters.hpp"
#include "batchai/control_plane/file_servers.hpp"
#include "batchai/control_plane/groups.hpp"
#include "batchai/control_plane/jobs.hpp"
#include "batchai/control_plane/storage_accounts.hpp"
#include "batchai/control_plane/workspaces.hpp"
#include "context.hpp"
#include "reconciler.hpp"
#include "rows.hpp"
#include "jobs/job_rows.hpp"
#include "store.hpp"

namespace batchai::control_plane {

using namespace detail;
using jobs_detail::require_experiment;

namespace {

constexpr std::size_t kMaxKeyBytes = 256;

// SQLite's LIMIT: limit + 1, bounded so that "everything" (list()'s own use) cannot overflow.
std::int64_t sql_limit(const PageRequest& page) {
  if (page.limit == 0) throw InvalidArgument("A page holds at least one item.");
  constexpr std::size_t kMax = static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max() - 1);
  return static_cast<std::int64_t>(page.limit < kMax ? page.limit : kMax) + 1;
}

[[noreturn]] void bad_key() {
  throw InvalidArgument("The continuation token is not one this list made.", "InvalidSkipToken");
}

// A name key: what a name_lc column holds (printable, bounded).
const std::string& name_key(const std::string& after) {
  if (after.size() > kMaxKeyBytes) bad_key();
  for (unsigned char c : after)
    if (c < 0x20 || c == 0x7f) bad_key();
  return after;
}

// A job key: the decimal row id ("" = 0, before every row).
std::int64_t id_key(const std::string& after) {
  if (after.empty()) return 0;
  if (after.size() > 18 || after.find_first_not_of("0123456789") != std::string::npos) bad_key();
  return std::stoll(after);
}

// Runs `st` (its parameters bound, LIMIT limit + 1 last) into a page: column 0 is the key,
// column 1 the stored document.
Page read_page(Statement& st, const PageRequest& page) {
  Page out;
  std::string last;
  while (st.step()) {
    if (out.items.size() == page.limit) {
      out.next = last;
      break;
    }
    last = st.text(0);
    out.items.push_back(parse_doc(st.text(1)));
  }
  return out;
}

}  // namespace

Page Groups::list_page(const PageRequest& page) {
  reconciler_.reconcile();
  return cx_.store().read([&] {
    auto st = cx_.store().prepare("SELECT name_lc, doc FROM resource_groups WHERE name_lc > ? ORDER BY name_lc LIMIT ?");
    st.bind(1, name_key(page.after)).bind(2, sql_limit(page));
    return read_page(st, page);
  });
}

Page StorageAccounts::list_page(const std::optional<std::string>& resource_group, const PageRequest& page) {
  return cx_.store().read([&] {
    if (resource_group) require_group(cx_.store(), *resource_group);
    auto st = cx_.store().prepare(
        "SELECT name_lc, doc FROM storage_accounts WHERE (?1 IS NULL OR rg_lc = ?1) AND name_lc > ?2 "
        "ORDER BY name_lc LIMIT ?3");
    st.bind(1, resource_group ? std::optional<std::string>(to_lower(*resource_group)) : std::nullopt)
        .bind(2, name_key(page.after))
        .bind(3, sql_limit(page));
    return read_page(st, page);
  });
}

Page Workspaces::list_page(const std::optional<std::string>& resource_group, const PageRequest& page) {
  reconciler_.reconcile();
  // "group/name": neither a group nor a workspace name holds '/'.
  std::string rg_after, name_after;
  if (!page.after.empty()) {
    const auto slash = name_key(page.after).find('/');
    if (slash == std::string::npos) bad_key();
    rg_after = page.after.substr(0, slash);
    name_after = page.after.substr(slash + 1);
  }
  return cx_.store().read([&] {
    if (resource_group) require_group(cx_.store(), *resource_group);
    auto st = cx_.store().prepare(
        "SELECT rg_lc || '/' || name_lc, doc FROM workspaces WHERE (?1 IS NULL OR rg_lc = ?1) "
        "AND (rg_lc, name_lc) > (?2, ?3) ORDER BY rg_lc, name_lc LIMIT ?4");
    st.bind(1, resource_group ? std::optional<std::string>(to_lower(*resource_group)) : std::nullopt)
        .bind(2, rg_after)
        .bind(3, name_after)
        .bind(4, sql_limit(page));
    return read_page(st, page);
  });
}

Page Clusters::list_page(const WorkspaceRef& ref, const PageRequest& page) {
  reconciler_.reconcile(ClusterScope::of_workspace(cx_.store(), ref));
  return cx_.store().read([&] {
    auto ws = require_workspace(cx_.store(), ref);
    auto st = cx_.store().prepare(
        "SELECT name_lc, doc FROM clusters WHERE workspace_id = ? AND name_lc > ? ORDER BY name_lc LIMIT ?");
    st.bind(1, ws.id).bind(2, name_key(page.after)).bind(3, sql_limit(page));
    return read_page(st, page);
  });
}

Page FileServers::list_page(const WorkspaceRef& ref, const PageRequest& page) {
  reconciler_.reconcile();
  return cx_.store().read([&] {
    auto ws = require_workspace(cx_.store(), ref);
    auto st = cx_.store().prepare(
        "SELECT name_lc, doc FROM file_servers WHERE workspace_id = ? AND name_lc > ? ORDER BY name_lc LIMIT ?");
    st.bind(1, ws.id).bind(2, name_key(page.after)).bind(3, sql_limit(page));
    return read_page(st, page);
  });
}

namespace {

// A page of one experiment's jobs: `read` turns the bound statement (id, doc) into the page.
template <typename Read>
auto read_jobs(const Context& cx, Reconciler& reconciler, const WorkspaceRef& where, const std::string& experiment,
               const PageRequest& page, Read&& read) {
  reconciler.reconcile();
  Store& store = cx.store();
  return store.read([&] {
    const std::int64_t exp = require_experiment(store, where, experiment);
    auto st = store.prepare("SELECT id, doc FROM jobs WHERE experiment_id = ? AND id > ? ORDER BY id LIMIT ?");
    st.bind(1, exp).bind(2, id_key(page.after)).bind(3, sql_limit(page));
    return read(st);
  });
}

}  // namespace

Page Jobs::list_page(const WorkspaceRef& where, const std::string& experiment, const PageRequest& page) {
  return read_jobs(cx_, reconciler_, where, experiment, page, [&](Statement& st) { return read_page(st, page); });
}

TextPage Jobs::list_page_text(const WorkspaceRef& where, const std::string& experiment, const PageRequest& page) {
  return read_jobs(cx_, reconciler_, where, experiment, page, [&](Statement& st) {
    TextPage out;
    while (st.step()) {
      if (out.rows.size() == page.limit) {
        out.next = std::to_string(out.rows.back().row_id);
        break;
      }
      out.rows.push_back({st.integer(0), st.text(1)});
    }
    return out;
  });
}

}  // namespace batchai::control_plane
