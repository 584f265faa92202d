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
#include "store/rows.hpp"
#include "store/jobs.hpp"
#include "store/pages.hpp"

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

// The rows read (limit + 1 at most) as a page: the extra row only says another page follows.
Page read_page(const std::vector<KeyedDoc>& rows, const PageRequest& page) {
  Page out;
  std::string last;
  for (const KeyedDoc& row : rows) {
    if (out.items.size() == page.limit) {
      out.next = last;
      break;
    }
    last = row.key;
    out.items.push_back(parse_doc(row.doc));
  }
  return out;
}

}  // namespace

Page Groups::list_page(const PageRequest& page) {
  reconciler_.reconcile();
  return cx_.store().read([&] {
    return read_page(group_page(cx_.store(), name_key(page.after), sql_limit(page)), page);
  });
}

Page StorageAccounts::list_page(const std::optional<std::string>& resource_group, const PageRequest& page) {
  return cx_.store().read([&] {
    if (resource_group) require_group(cx_.store(), *resource_group);
    return read_page(account_page(cx_.store(), resource_group, name_key(page.after), sql_limit(page)), page);
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
    return read_page(workspace_page(cx_.store(), resource_group, rg_after, name_after, sql_limit(page)), page);
  });
}

Page Clusters::list_page(const WorkspaceRef& ref, const PageRequest& page) {
  reconciler_.reconcile(ClusterScope::of_workspace(cx_.store(), ref));
  return cx_.store().read([&] {
    auto ws = require_workspace(cx_.store(), ref);
    return read_page(cluster_page(cx_.store(), ws.id, name_key(page.after), sql_limit(page)), page);
  });
}

Page FileServers::list_page(const WorkspaceRef& ref, const PageRequest& page) {
  reconciler_.reconcile();
  return cx_.store().read([&] {
    auto ws = require_workspace(cx_.store(), ref);
    return read_page(file_server_page(cx_.store(), ws.id, name_key(page.after), sql_limit(page)), page);
  });
}

namespace {

// One experiment's jobs after the page's position, by row id: id and document text, limit + 1 at most.
std::vector<std::pair<std::int64_t, std::string>> job_rows(const Context& cx, Reconciler& reconciler,
                                                            const WorkspaceRef& where, const std::string& experiment,
                                                            const PageRequest& page) {
  reconciler.reconcile();
  Store& store = cx.store();
  return store.read([&] {
    const std::int64_t exp = require_experiment(store, where, experiment);
    return job_page(store, exp, id_key(page.after), sql_limit(page));
  });
}

}  // namespace

Page Jobs::list_page(const WorkspaceRef& where, const std::string& experiment, const PageRequest& page) {
  Page out;
  std::string last;
  for (const auto& [id, doc] : job_rows(cx_, reconciler_, where, experiment, page)) {
    if (out.items.size() == page.limit) {
      out.next = last;
      break;
    }
    last = std::to_string(id);
    out.items.push_back(parse_doc(doc));
  }
  return out;
}

TextPage Jobs::list_page_text(const WorkspaceRef& where, const std::string& experiment, const PageRequest& page) {
  TextPage out;
  for (auto& [id, doc] : job_rows(cx_, reconciler_, where, experiment, page)) {
    if (out.rows.size() == page.limit) {
      out.next = std::to_string(out.rows.back().row_id);
      break;
    }
    out.rows.push_back({id, std::move(doc)});
  }
  return out;
}

}  // namespace batchai::control_plane
