// The nodes table: as the jobs use it (store/nodes.hpp) and as the simulated engine steps it
// (store/cluster_nodes.hpp).
#include "store/nodes.hpp"

#include "store/cluster_nodes.hpp"
#include "store/columns.hpp"
#include "store/dashboard.hpp"

namespace batchai::control_plane::jobs_detail {

std::vector<std::pair<std::string, int>> job_nodes(Store& store, const std::string& job_key) {
  std::vector<std::pair<std::string, int>> out;
  auto st = store.prepare("SELECT node_id, ordinal FROM nodes WHERE job_key = ? ORDER BY ordinal");
  st.bind(1, job_key);
  while (st.step()) out.emplace_back(st.text(0), static_cast<int>(st.integer(1)));
  return out;
}

int running_node_count(Store& store, const std::string& job_key) {
  auto st = store.prepare("SELECT count(*) FROM nodes WHERE job_key = ? AND state = 'running'");
  st.bind(1, job_key);
  return st.step() ? static_cast<int>(st.integer(0)) : 0;
}

std::vector<std::int64_t> free_nodes(Store& store, const std::string& job_key) {
  std::vector<std::int64_t> clusters;
  {
    auto st = store.prepare("SELECT DISTINCT cluster_id FROM nodes WHERE job_key = ?");
    st.bind(1, job_key);
    while (st.step()) clusters.push_back(st.integer(0));
  }
  // Leaving nodes stay leaving; only nodes still marked running become idle again.
  store.prepare("UPDATE nodes SET state = 'idle' WHERE job_key = ? AND state = 'running'").bind(1, job_key).run();
  store.prepare("UPDATE nodes SET job_key = NULL WHERE job_key = ?").bind(1, job_key).run();
  return clusters;
}

std::vector<std::int64_t> free_idle_nodes(Store& store, std::int64_t cluster_id) {
  auto st = store.prepare("SELECT id FROM nodes WHERE cluster_id = ? AND state = 'idle' AND job_key IS NULL ORDER BY ordinal");
  st.bind(1, cluster_id);
  std::vector<std::int64_t> out;
  while (st.step()) out.push_back(st.integer(0));
  return out;
}

void give_node(Store& store, std::int64_t node_id, const std::string& job_key) {
  store.prepare("UPDATE nodes SET state = 'running', job_key = ? WHERE id = ?").bind(1, job_key).bind(2, node_id).run();
}

}  // namespace batchai::control_plane::jobs_detail

namespace batchai::control_plane::detail {

std::vector<StoredNode> cluster_nodes(Store& store, std::int64_t cluster_id) {
  auto st = store.prepare(
      "SELECT id, node_id, state, setup, ready_us, leave_us, setup_exit FROM nodes WHERE cluster_id = ? ORDER BY "
      "ordinal");
  st.bind(1, cluster_id);
  std::vector<StoredNode> out;
  while (st.step())
    out.push_back({st.integer(0), st.text(1), st.text(2), st.text(3), st.integer(4), st.optional_integer(5),
                   st.optional_integer(6)});
  return out;
}

std::int64_t insert_node(Store& store, std::int64_t cluster_id, const StoredNode& node, std::int64_t ordinal,
                         std::int64_t created_us) {
  store.prepare("INSERT INTO nodes(cluster_id, node_id, ordinal, state, created_us, ready_us, setup) VALUES (?,?,?,?,?,?,?)")
      .bind(1, cluster_id).bind(2, node.node_id).bind(3, ordinal).bind(4, node.state).bind(5, created_us)
      .bind(6, node.ready_us).bind(7, node.setup).run();
  return store.last_insert_rowid();
}

void set_node_state(Store& store, std::int64_t row, const std::string& state, std::optional<std::int64_t> leave_us) {
  store.prepare("UPDATE nodes SET state = ?, leave_us = ? WHERE id = ?").bind(1, state).bind(2, leave_us).bind(3, row).run();
}

void set_node_setup(Store& store, std::int64_t row, const std::string& setup, int exit_code) {
  store.prepare("UPDATE nodes SET setup = ?, setup_exit = ? WHERE id = ?").bind(1, setup).bind(2, exit_code).bind(3, row).run();
}

void delete_node(Store& store, std::int64_t row) { store.prepare("DELETE FROM nodes WHERE id = ?").bind(1, row).run(); }

std::vector<std::pair<std::string, std::string>> claim_preparing_nodes(Store& store, std::int64_t cluster_id) {
  std::vector<std::pair<std::string, std::string>> out;
  {
    auto st = store.prepare("SELECT node_id, setup FROM nodes WHERE cluster_id = ? AND state = 'preparing'");
    st.bind(1, cluster_id);
    while (st.step()) out.emplace_back(st.text(0), st.text(1));
  }
  store.prepare("UPDATE nodes SET setup = 'started' WHERE cluster_id = ? AND setup = 'pending'").bind(1, cluster_id).run();
  return out;
}

std::vector<std::string> idle_node_ids(Store& store, std::int64_t cluster_id) {
  auto st = store.prepare("SELECT node_id FROM nodes WHERE cluster_id = ? AND state = 'idle'");
  st.bind(1, cluster_id);
  return column_texts(st);
}

void fail_node_setup(Store& store, std::int64_t cluster_id, const std::string& node_id) {
  store.prepare("UPDATE nodes SET setup = 'failed', setup_exit = NULL, state = CASE WHEN state = 'idle' "
                "THEN 'unusable' ELSE state END WHERE cluster_id = ? AND node_id = ?")
      .bind(1, cluster_id).bind(2, node_id).run();
}

std::vector<std::pair<std::string, std::int64_t>> staying_nodes(Store& store, std::int64_t cluster_id) {
  auto st = store.prepare("SELECT node_id, ordinal FROM nodes WHERE cluster_id = ? AND state <> 'leaving' ORDER BY ordinal");
  st.bind(1, cluster_id);
  std::vector<std::pair<std::string, std::int64_t>> out;
  while (st.step()) out.emplace_back(st.text(0), st.integer(1));
  return out;
}

std::optional<std::int64_t> staying_node_ordinal(Store& store, std::int64_t cluster_id, const std::string& node_id) {
  auto st = store.prepare("SELECT ordinal FROM nodes WHERE node_id = ? AND cluster_id = ? AND state <> 'leaving'");
  st.bind(1, node_id).bind(2, cluster_id);
  if (!st.step()) return std::nullopt;
  return st.integer(0);
}

std::vector<NodeHolder> node_holders(Store& store, std::int64_t cluster_id, std::size_t limit) {
  auto st = store.prepare("SELECT node_id, state, job_key FROM nodes WHERE cluster_id = ? ORDER BY ordinal LIMIT ?");
  st.bind(1, cluster_id).bind(2, static_cast<std::int64_t>(limit));
  std::vector<NodeHolder> out;
  while (st.step()) out.push_back({st.text(0), st.text(1), st.optional_text(2)});
  return out;
}

bool queue_fits_idle_nodes(Store& store, std::int64_t cluster_id) {
  auto st = store.prepare(
      "SELECT (SELECT count(*) FROM jobs WHERE cluster_id = ?1 AND state = 'queued') <= "
      "(SELECT count(*) FROM nodes WHERE cluster_id = ?1 AND state = 'idle' AND job_key IS NULL)");
  st.bind(1, cluster_id);
  return st.step() && st.integer(0) != 0;
}

NodeRoom node_room(Store& store, std::int64_t cluster_id) {
  auto st = store.prepare(
      "SELECT (SELECT count(*) FROM nodes WHERE cluster_id = ?1 AND state = 'idle' AND job_key IS NULL), "
      "(SELECT count(*) FROM nodes WHERE cluster_id = ?1 AND state <> 'leaving')");
  st.bind(1, cluster_id);
  NodeRoom out;
  if (st.step()) out = {st.integer(0), st.integer(1)};
  return out;
}

std::vector<NodeStateRow> node_states(Store& store) {
  auto st = store.prepare("SELECT id, state, coalesce(job_key, '') FROM nodes ORDER BY id");
  std::vector<NodeStateRow> out;
  while (st.step()) out.push_back({st.integer(0), st.text(1), st.text(2)});
  return out;
}

}  // namespace batchai::control_plane::detail
