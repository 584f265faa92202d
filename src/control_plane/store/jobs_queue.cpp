// The jobs table as the schedulers read it (store/jobs.hpp): batchai's own, from the
// jobs_schedule index alone where it can (migrations.cpp v5), since every command runs a step;
// and the queues of engines that schedule their jobs themselves (engine/slurm).
#include "store/columns.hpp"
#include "store/jobs.hpp"

namespace batchai::control_plane::jobs_detail {

using namespace detail;

std::vector<QueuedJob> queued_jobs(Store& store) {
  // A queued job's engine is its cluster's (a job takes its cluster's kind when it is made); one
  // without a cluster cannot be placed.
  auto st = store.prepare(
      "SELECT j.id, j.job_key, j.cluster_id, j.priority, j.created_us, c.engine FROM jobs j JOIN clusters c ON "
      "c.id = j.cluster_id WHERE j.state = 'queued'");
  std::vector<QueuedJob> out;
  while (st.step())
    out.push_back({st.integer(0), st.text(1), st.integer(2), static_cast<int>(st.integer(3)), st.integer(4),
                   kind_of_engine_column(st.text(5))});
  return out;
}

std::vector<ActiveJob> active_jobs(Store& store) {
  auto st = store.prepare(
      "SELECT job_key, sup_pid, created_us, json_extract(doc, '$.executionStateTransitionTime'), engine, cluster_id "
      "FROM jobs WHERE state IN ('running', 'terminating')");
  std::vector<ActiveJob> out;
  while (st.step())
    out.push_back({st.text(0), st.optional_integer(1), st.integer(2), st.optional_text(3),
                   kind_of_engine_column(st.text(4)), st.optional_integer(5)});
  return out;
}

std::vector<std::string> keys_holding_nodes_while_not_running(Store& store) {
  auto st = store.prepare(
      "SELECT DISTINCT n.job_key FROM nodes n LEFT JOIN jobs j ON j.job_key = n.job_key WHERE n.job_key IS NOT NULL "
      "AND (j.id IS NULL OR j.state IN ('queued', 'succeeded', 'failed'))");
  return column_texts(st);
}

std::vector<std::int64_t> clusters_with_queue_and_idle_node(Store& store) {
  auto st = store.prepare(
      "SELECT DISTINCT j.cluster_id FROM jobs j WHERE j.state = 'queued' AND j.cluster_id IS NOT NULL AND EXISTS("
      "SELECT 1 FROM nodes n WHERE n.cluster_id = j.cluster_id AND n.state = 'idle' AND n.job_key IS NULL)");
  return column_integers(st);
}

std::optional<JobState> job_state(Store& store, const std::string& job_key) {
  auto st = store.prepare("SELECT state FROM jobs WHERE job_key = ?");
  st.bind(1, job_key);
  if (!st.step()) return std::nullopt;
  return parse_job_state(st.text(0));
}

std::vector<std::pair<std::string, int>> queued_keys_and_sizes(Store& store, std::int64_t cluster_id) {
  auto st = store.prepare(
      "SELECT job_key, node_count FROM jobs WHERE cluster_id = ? AND state = 'queued' ORDER BY priority DESC, "
      "created_us, id");
  st.bind(1, cluster_id);
  std::vector<std::pair<std::string, int>> out;
  while (st.step()) out.emplace_back(st.text(0), static_cast<int>(st.integer(1)));
  return out;
}

std::vector<std::pair<std::int64_t, int>> changed_auto_scale_demands(Store& store) {
  auto st = store.prepare(
      "SELECT c.id, COALESCE(SUM(j.node_count), 0), c.auto_demand FROM clusters c LEFT JOIN jobs j ON j.cluster_id = "
      "c.id AND j.state IN ('queued', 'running', 'terminating') WHERE c.scale_mode = 'auto' GROUP BY c.id");
  std::vector<std::pair<std::int64_t, int>> out;
  while (st.step()) {
    const int want = static_cast<int>(st.integer(1));
    if (st.is_null(2) || st.integer(2) != want) out.emplace_back(st.integer(0), want);
  }
  return out;
}

bool holds_unsubmitted_job(Store& store, std::int64_t cluster_id, ClusterKind engine) {
  auto st = store.prepare(
      "SELECT 1 FROM jobs WHERE cluster_id = ? AND state = 'queued' AND engine = ? AND engine_job_id IS NULL LIMIT 1");
  st.bind(1, cluster_id).bind(2, engine_column(engine));
  return st.step();
}

std::vector<QueueSlot> engine_queue_slots(Store& store, std::int64_t cluster_id, ClusterKind engine) {
  auto st = store.prepare("SELECT id, state, node_count, engine_job_id IS NOT NULL FROM jobs WHERE cluster_id = ? AND "
                          "engine = ? AND state IN ('queued', 'running', 'terminating') "
                          "ORDER BY priority DESC, created_us, id");
  st.bind(1, cluster_id).bind(2, engine_column(engine));
  std::vector<QueueSlot> out;
  while (st.step())
    out.push_back({st.integer(0), st.text(1) == "queued", static_cast<int>(st.integer(2)), st.integer(3) != 0});
  return out;
}

std::vector<std::pair<std::int64_t, Json>> engine_job_docs(Store& store, ClusterKind engine, DocsOf which) {
  auto st = store.prepare(which == DocsOf::kWithErrors
                              ? "SELECT id, doc FROM jobs WHERE engine = ? AND doc -> '$.errors' IS NOT NULL"
                              : "SELECT id, doc FROM jobs WHERE engine = ? AND state IN ('queued', 'running', "
                                "'terminating')");
  st.bind(1, engine_column(engine));
  std::vector<std::pair<std::int64_t, Json>> out;
  while (st.step()) out.emplace_back(st.integer(0), parse_doc(st.text(1)));
  return out;
}

void save_job_doc(Store& store, std::int64_t id, const Json& doc) {
  store.prepare("UPDATE jobs SET doc = ? WHERE id = ?").bind(1, dump_doc(doc)).bind(2, id).run();
}

std::vector<std::pair<std::string, Json>> running_jobs_private(Store& store, std::int64_t cluster_id) {
  auto st = store.prepare("SELECT job_key, private FROM jobs WHERE cluster_id = ? AND state IN ('running', 'terminating')");
  st.bind(1, cluster_id);
  std::vector<std::pair<std::string, Json>> out;
  while (st.step()) out.emplace_back(st.text(0), parse_doc(st.text(1)));
  return out;
}

}  // namespace batchai::control_plane::jobs_detail
