// Pages of every listed table (store/pages.hpp): the keyset queries of resource_groups,
// storage_accounts, workspaces, clusters, file_servers and jobs, side by side because they are
// one pattern (key > after ORDER BY key LIMIT n).
#include "store/pages.hpp"

#include "batchai/common/ids.hpp"

namespace batchai::control_plane::detail {

namespace {

std::vector<KeyedDoc> read_keyed(Statement& st) {
  std::vector<KeyedDoc> out;
  while (st.step()) out.push_back({st.text(0), st.text(1)});
  return out;
}

std::optional<std::string> lower_or_null(const std::optional<std::string>& group) {
  return group ? std::optional<std::string>(to_lower(*group)) : std::nullopt;
}

}  // namespace

std::vector<KeyedDoc> group_page(Store& store, const std::string& after, std::int64_t limit) {
  auto st = store.prepare("SELECT name_lc, doc FROM resource_groups WHERE name_lc > ? ORDER BY name_lc LIMIT ?");
  st.bind(1, after).bind(2, limit);
  return read_keyed(st);
}

std::vector<KeyedDoc> account_page(Store& store, const std::optional<std::string>& group, const std::string& after,
                                   std::int64_t limit) {
  auto st = store.prepare(
      "SELECT name_lc, doc FROM storage_accounts WHERE (?1 IS NULL OR rg_lc = ?1) AND name_lc > ?2 "
      "ORDER BY name_lc LIMIT ?3");
  st.bind(1, lower_or_null(group)).bind(2, after).bind(3, limit);
  return read_keyed(st);
}

std::vector<KeyedDoc> workspace_page(Store& store, const std::optional<std::string>& group,
                                     const std::string& group_after, const std::string& name_after, std::int64_t limit) {
  auto st = store.prepare(
      "SELECT rg_lc || '/' || name_lc, doc FROM workspaces WHERE (?1 IS NULL OR rg_lc = ?1) "
      "AND (rg_lc, name_lc) > (?2, ?3) ORDER BY rg_lc, name_lc LIMIT ?4");
  st.bind(1, lower_or_null(group)).bind(2, group_after).bind(3, name_after).bind(4, limit);
  return read_keyed(st);
}

std::vector<KeyedDoc> cluster_page(Store& store, std::int64_t workspace_id, const std::string& after, std::int64_t limit) {
  auto st = store.prepare(
      "SELECT name_lc, doc FROM clusters WHERE workspace_id = ? AND name_lc > ? ORDER BY name_lc LIMIT ?");
  st.bind(1, workspace_id).bind(2, after).bind(3, limit);
  return read_keyed(st);
}

std::vector<KeyedDoc> file_server_page(Store& store, std::int64_t workspace_id, const std::string& after,
                                       std::int64_t limit) {
  auto st = store.prepare(
      "SELECT name_lc, doc FROM file_servers WHERE workspace_id = ? AND name_lc > ? ORDER BY name_lc LIMIT ?");
  st.bind(1, workspace_id).bind(2, after).bind(3, limit);
  return read_keyed(st);
}

std::vector<std::pair<std::int64_t, std::string>> job_page(Store& store, std::int64_t experiment_id,
                                                            std::int64_t after_id, std::int64_t limit) {
  auto st = store.prepare("SELECT id, doc FROM jobs WHERE experiment_id = ? AND id > ? ORDER BY id LIMIT ?");
  st.bind(1, experiment_id).bind(2, after_id).bind(3, limit);
  std::vector<std::pair<std::int64_t, std::string>> out;
  while (st.step()) out.emplace_back(st.integer(0), st.text(1));
  return out;
}

}  // namespace batchai::control_plane::detail
