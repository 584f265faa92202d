// The jobs table as the dashboard reads it (store/dashboard.hpp): counts and versions from the
// index jobs_by_experiment alone (migrations.cpp v4), documents only for a page's rows.
#include "store/dashboard.hpp"

namespace batchai::control_plane::detail {

namespace {

std::vector<JobStateRow> read_states(Statement& st, bool with_experiment) {
  std::vector<JobStateRow> out;
  while (st.step())
    out.push_back({st.integer(0), with_experiment ? st.integer(1) : 0, st.text(with_experiment ? 2 : 1)});
  return out;
}

}  // namespace

std::vector<JobStateRow> job_states(Store& store) {
  auto st = store.prepare("SELECT id, experiment_id, state FROM jobs");
  return read_states(st, true);
}

std::vector<JobStateRow> job_states_of_experiment(Store& store, std::int64_t experiment_id) {
  auto st = store.prepare("SELECT id, state FROM jobs WHERE experiment_id = ?");
  st.bind(1, experiment_id);
  return read_states(st, false);
}

std::vector<std::int64_t> queued_job_order(Store& store, std::int64_t cluster_id) {
  auto st = store.prepare("SELECT id FROM jobs WHERE cluster_id = ? AND state = 'queued' ORDER BY priority DESC, created_us, id");
  st.bind(1, cluster_id);
  std::vector<std::int64_t> out;
  while (st.step()) out.push_back(st.integer(0));
  return out;
}

std::vector<JobPageRow> job_page(Store& store, std::int64_t experiment_id, const std::string& state, std::int64_t limit,
                                 std::int64_t offset) {
  // The page's rows picked by (created_us, id) alone; documents read for those rows only.
  const std::string filter = state.empty() ? "" : " AND state = ?4";
  auto st = store.prepare(
      "SELECT j.id, j.name, j.state, c.name, j.node_count, j.doc ->> '$.toolType', j.doc ->> '$.creationTime', "
      "j.doc ->> '$.executionInfo.startTime', j.doc ->> '$.executionInfo.endTime', "
      "j.doc -> '$.executionInfo.exitCode', j.cluster_id FROM jobs j LEFT JOIN clusters c ON c.id = j.cluster_id "
      "WHERE j.id IN (SELECT id FROM jobs WHERE experiment_id = ?1" + filter +
      " ORDER BY created_us DESC, id DESC LIMIT ?2 OFFSET ?3) ORDER BY j.created_us DESC, j.id DESC");
  st.bind(1, experiment_id).bind(2, limit).bind(3, offset);
  if (!state.empty()) st.bind(4, state);
  std::vector<JobPageRow> out;
  while (st.step()) {
    JobPageRow j;
    j.id = st.integer(0);
    j.name = st.text(1);
    j.state = st.text(2);
    j.cluster = st.optional_text(3);
    j.node_count = st.integer(4);
    j.tool_type = st.optional_text(5);
    j.creation_time = st.optional_text(6);
    j.start_time = st.optional_text(7);
    j.end_time = st.optional_text(8);
    if (auto code = st.optional_text(9); code && *code != "null") {
      try {
        j.exit_code = std::stoll(*code);
      } catch (...) {  // a code that is not an integer is shown as none
      }
    }
    j.cluster_id = st.optional_integer(10);
    out.push_back(std::move(j));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> newest_job_states(Store& store, std::int64_t experiment_id,
                                                                   std::int64_t limit) {
  auto st = store.prepare("SELECT name, state FROM jobs WHERE experiment_id = ? ORDER BY created_us DESC, id DESC LIMIT ?");
  st.bind(1, experiment_id).bind(2, limit);
  std::vector<std::pair<std::string, std::string>> out;
  while (st.step()) out.emplace_back(st.text(0), st.text(1));
  return out;
}

std::optional<std::pair<std::string, std::string>> job_names_by_key(Store& store, const std::string& job_key) {
  auto st = store.prepare("SELECT e.name, j.name FROM jobs j JOIN experiments e ON e.id = j.experiment_id WHERE j.job_key = ?");
  st.bind(1, job_key);
  if (!st.step()) return std::nullopt;
  return std::make_pair(st.text(0), st.text(1));
}

}  // namespace batchai::control_plane::detail
