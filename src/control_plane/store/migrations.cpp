// Schema steps of the state database. Never edit a released step: append a new version.
// Conventions: *_lc columns hold lower-cased names (lookups are case-insensitive), `doc` holds
// the resource document exactly as `show` prints it, times are microseconds since the epoch.
#include "store/store.hpp"

namespace batchai::control_plane {

namespace {

constexpr const char* kV1 = R"sql(
CREATE TABLE resource_groups(
  name_lc TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  location TEXT NOT NULL,
  doc TEXT NOT NULL);

CREATE TABLE storage_accounts(
  name_lc TEXT PRIMARY KEY,
  rg_lc TEXT NOT NULL REFERENCES resource_groups(name_lc) ON DELETE CASCADE,
  location TEXT NOT NULL,
  key1 TEXT NOT NULL,
  key2 TEXT NOT NULL,
  doc TEXT NOT NULL);
CREATE INDEX storage_accounts_rg ON storage_accounts(rg_lc);

CREATE TABLE workspaces(
  id INTEGER PRIMARY KEY,
  rg_lc TEXT NOT NULL REFERENCES resource_groups(name_lc) ON DELETE CASCADE,
  name_lc TEXT NOT NULL,
  name TEXT NOT NULL,
  location TEXT NOT NULL,
  doc TEXT NOT NULL,
  UNIQUE(rg_lc, name_lc));

CREATE TABLE experiments(
  id INTEGER PRIMARY KEY,
  workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  name_lc TEXT NOT NULL,
  name TEXT NOT NULL,
  doc TEXT NOT NULL,
  UNIQUE(workspace_id, name_lc));

-- Desired state (mode/target/bounds/demand) and simulation inputs are columns; `doc` is
-- refreshed from them by reconcile. pending=1 while anything still changes with time.
CREATE TABLE clusters(
  id INTEGER PRIMARY KEY,
  workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  name_lc TEXT NOT NULL,
  name TEXT NOT NULL,
  doc TEXT NOT NULL,
  location TEXT NOT NULL,
  vm_size TEXT NOT NULL,
  vm_priority TEXT NOT NULL,
  scale_mode TEXT NOT NULL,            -- 'manual' | 'auto'
  target INTEGER NOT NULL,             -- manual target / auto-scale initial count
  min_nodes INTEGER NOT NULL DEFAULT 0,
  max_nodes INTEGER NOT NULL DEFAULT 0,
  auto_demand INTEGER,                 -- nodes wanted by queued/running work (jobs set it)
  alloc_started_us INTEGER NOT NULL,   -- when the current resize began
  alloc_state TEXT NOT NULL,           -- 'steady' | 'resizing'
  alloc_changed_us INTEGER NOT NULL,
  pending INTEGER NOT NULL DEFAULT 1,
  next_ordinal INTEGER NOT NULL DEFAULT 0,
  node_prefix TEXT NOT NULL,           -- 'tvm-<digits>'
  public_ip TEXT NOT NULL,
  private TEXT NOT NULL DEFAULT '{}',  -- secrets the doc must not show (setup task secrets)
  UNIQUE(workspace_id, name_lc));
CREATE INDEX clusters_pending ON clusters(pending) WHERE pending = 1;

-- state: preparing | idle | running | leaving | unusable. job_key: the job using the node.
-- setup: none | pending | started | done | failed.
CREATE TABLE nodes(
  id INTEGER PRIMARY KEY,
  cluster_id INTEGER NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,
  node_id TEXT NOT NULL UNIQUE,
  ordinal INTEGER NOT NULL,
  state TEXT NOT NULL,
  created_us INTEGER NOT NULL,
  ready_us INTEGER NOT NULL,
  leave_us INTEGER,
  setup TEXT NOT NULL,
  setup_exit INTEGER,
  job_key TEXT);
CREATE INDEX nodes_cluster ON nodes(cluster_id, state);

CREATE TABLE file_servers(
  id INTEGER PRIMARY KEY,
  workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  name_lc TEXT NOT NULL,
  name TEXT NOT NULL,
  doc TEXT NOT NULL,
  ready_us INTEGER NOT NULL,
  pending INTEGER NOT NULL DEFAULT 1,
  UNIQUE(workspace_id, name_lc));
CREATE INDEX file_servers_pending ON file_servers(pending) WHERE pending = 1;

-- Folders to remove once the deleting transaction committed (survives a crash in between).
CREATE TABLE trash(path TEXT PRIMARY KEY);
)sql";

// Jobs (control_plane/jobs): state and scheduling inputs are columns; `doc` is the Job document;
// `private` holds what `show` must not print (secrets, mount keys, resolved folders).
constexpr const char* kV2Jobs = R"sql(
CREATE TABLE jobs(
  id INTEGER PRIMARY KEY,
  job_key TEXT NOT NULL UNIQUE,        -- uuid; nodes.job_key points here while the job runs
  experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
  cluster_id INTEGER REFERENCES clusters(id) ON DELETE SET NULL,
  name_lc TEXT NOT NULL,
  name TEXT NOT NULL,
  state TEXT NOT NULL,                 -- queued | running | terminating | succeeded | failed
  priority INTEGER NOT NULL,           -- 2 high, 1 normal, 0 low
  node_count INTEGER NOT NULL,
  created_us INTEGER NOT NULL,
  doc TEXT NOT NULL,
  private TEXT NOT NULL DEFAULT '{}',
  sup_pid INTEGER,                     -- supervisor pid once it holds its lock
  UNIQUE(experiment_id, name_lc));
CREATE INDEX jobs_queue ON jobs(cluster_id, state);
CREATE INDEX jobs_state ON jobs(state);
)sql";

// Slurm outages (docs/slurm.md, "When the controller does not answer"): the back-off after a
// controller stayed silent, shared by every process of the home; Slurm jobs a terminate or delete
// could not cancel, cancelled once their controller answers; and the claim of a job's run, taken
// once by the first runner (a batch script a restarted controller starts again finds it taken).
constexpr const char* kV3Slurm = R"sql(
CREATE TABLE slurm_controllers(
  controller TEXT PRIMARY KEY,         -- the slurm.conf a process uses ('' for the system's)
  silent_until_us INTEGER NOT NULL,    -- no process asks it before this time
  error TEXT NOT NULL);                -- the errors entry the silence put on its clusters and jobs
CREATE TABLE slurm_cancels(
  controller TEXT NOT NULL,
  slurm_job_id INTEGER NOT NULL,
  since_us INTEGER NOT NULL,
  PRIMARY KEY(controller, slurm_job_id));
ALTER TABLE jobs ADD COLUMN run_claim TEXT;  -- who started the job's run; NULL until one did
)sql";

// The dashboard (dashboard_reads.cpp): an experiment's jobs by age with their state, read from the
// index alone, so its counts and a page of 10,000 jobs never touch the documents.
constexpr const char* kV4Dashboard = R"sql(
CREATE INDEX jobs_by_experiment ON jobs(experiment_id, created_us, state);
)sql";

// The scheduler (jobs/scheduler.cpp), run by every command: the queue in its order and the sizes,
// keys and supervisor pids it needs, read from the index without touching the rows.
constexpr const char* kV5Schedule = R"sql(
CREATE INDEX jobs_schedule ON jobs(state, cluster_id, priority DESC, created_us, id, node_count, job_key, sup_pid);
)sql";

// A queued Slurm cancel names the job it is for: a restarted controller may have given the id to
// another job meanwhile, which is never cancelled (slurm::is_same_job). NULL on older rows.
constexpr const char* kV6SlurmCancelKey = R"sql(
ALTER TABLE slurm_cancels ADD COLUMN job_key TEXT;
)sql";

// The engine is a column (issue 54): which engine runs a cluster and its jobs, and the id a job has
// in its engine's own scheduler (Slurm's job id), were entries of the `private` JSON that reads
// searched as text. Existing rows take theirs from that JSON once, here; Slurm's job id leaves it.
constexpr const char* kV7EngineColumns = R"sql(
ALTER TABLE clusters ADD COLUMN engine TEXT NOT NULL DEFAULT 'simulated';  -- 'simulated' | 'slurm'
ALTER TABLE jobs ADD COLUMN engine TEXT NOT NULL DEFAULT 'simulated';      -- its cluster's, when made
ALTER TABLE jobs ADD COLUMN engine_job_id INTEGER;  -- the engine scheduler's id; NULL until submitted
UPDATE clusters SET engine = 'slurm' WHERE json_type(private, '$.slurm') = 'object';
UPDATE jobs SET engine = 'slurm', engine_job_id = json_extract(private, '$.slurm.jobId'),
                private = json_remove(private, '$.slurm.jobId')
  WHERE json_type(private, '$.slurm') = 'object';
CREATE INDEX jobs_engine ON jobs(engine, state);  -- an engine's unfinished jobs, wherever they are
)sql";

// Slurm's state in Slurm's own tables (issue 54): the partition and nodes of a Slurm cluster and
// what Slurm said of a Slurm job were a "slurm" entry of the rows' `private` JSON. Existing rows
// take theirs from that JSON once, here (a value of another type than the one written reads as
// unknown), and the entry leaves it.
constexpr const char* kV8SlurmTables = R"sql(
CREATE TABLE slurm_clusters(
  cluster_id INTEGER PRIMARY KEY REFERENCES clusters(id) ON DELETE CASCADE,
  partition TEXT NOT NULL);
CREATE TABLE slurm_cluster_nodes(      -- as the last sinfo saw them
  cluster_id INTEGER NOT NULL REFERENCES slurm_clusters(cluster_id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  ordinal INTEGER NOT NULL,            -- its place in sinfo's answer
  address TEXT NOT NULL DEFAULT '',    -- NodeAddr; '' when stored before addresses were read
  gpus INTEGER NOT NULL DEFAULT 0,     -- GPUs among its generic resources
  state TEXT NOT NULL,                 -- the API's word: idle | running | preparing | unusable
  slurm_state TEXT NOT NULL,           -- sinfo's
  PRIMARY KEY(cluster_id, name));
CREATE TABLE slurm_jobs(               -- from the job's submission on
  job_id INTEGER PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,
  partition TEXT NOT NULL,
  submitted_us INTEGER,
  gpus_per_node INTEGER,               -- sbatch --gres=gpu:N
  pending_reason TEXT NOT NULL DEFAULT '',
  node_list TEXT NOT NULL DEFAULT '',  -- Slurm's host list of the allocation
  final_state TEXT NOT NULL DEFAULT '');
INSERT INTO slurm_clusters(cluster_id, partition)
  SELECT id, json_extract(private, '$.slurm.partition') FROM clusters
  WHERE json_type(private, '$.slurm.partition') = 'text';
INSERT OR IGNORE INTO slurm_cluster_nodes(cluster_id, name, ordinal, address, gpus, state, slurm_state)
  SELECT c.id, json_extract(n.value, '$.name'), n.key,
         CASE json_type(n.value, '$.address') WHEN 'text' THEN json_extract(n.value, '$.address') ELSE '' END,
         CASE json_type(n.value, '$.gpus') WHEN 'integer' THEN json_extract(n.value, '$.gpus') ELSE 0 END,
         CASE json_type(n.value, '$.state') WHEN 'text' THEN json_extract(n.value, '$.state') ELSE '' END,
         CASE json_type(n.value, '$.slurmState') WHEN 'text' THEN json_extract(n.value, '$.slurmState') ELSE '' END
  FROM clusters c JOIN slurm_clusters s ON s.cluster_id = c.id, json_each(c.private, '$.slurm.nodes') n
  WHERE json_type(c.private, '$.slurm.nodes') = 'array' AND json_type(n.value, '$.name') = 'text';
INSERT INTO slurm_jobs(job_id, partition, submitted_us, gpus_per_node, pending_reason, node_list, final_state)
  SELECT id,
         CASE json_type(s, '$.partition') WHEN 'text' THEN json_extract(s, '$.partition') ELSE '' END,
         CASE json_type(s, '$.submittedUs') WHEN 'integer' THEN json_extract(s, '$.submittedUs') END,
         CASE json_type(s, '$.gpusPerNode') WHEN 'integer' THEN json_extract(s, '$.gpusPerNode') END,
         CASE json_type(s, '$.pendingReason') WHEN 'text' THEN json_extract(s, '$.pendingReason') ELSE '' END,
         CASE json_type(s, '$.nodeList') WHEN 'text' THEN json_extract(s, '$.nodeList') ELSE '' END,
         CASE json_type(s, '$.finalState') WHEN 'text' THEN json_extract(s, '$.finalState') ELSE '' END
  FROM (SELECT id, json_extract(private, '$.slurm') AS s FROM jobs WHERE json_type(private, '$.slurm') = 'object');
UPDATE clusters SET private = json_remove(private, '$.slurm') WHERE json_type(private, '$.slurm') IS NOT NULL;
UPDATE jobs SET private = json_remove(private, '$.slurm') WHERE json_type(private, '$.slurm') IS NOT NULL;
)sql";

// The containers a Slurm job left on its nodes when its whole batch step died (scancel -s KILL, a
// lost node): the login host removes them through a small cleanup job of its own on those nodes
// (engine/slurm/container_cleanups.cpp). Not tied to the jobs row: the row may go first.
constexpr const char* kV9SlurmCleanups = R"sql(
CREATE TABLE slurm_cleanups(
  job_key TEXT PRIMARY KEY,
  controller TEXT NOT NULL,            -- the slurm.conf a process uses ('' for the system's)
  partition TEXT NOT NULL,
  node_list TEXT NOT NULL,             -- Slurm's host list of the job's allocation
  cleanup_job_id INTEGER,              -- the cleanup's Slurm job id while one is submitted
  next_try_us INTEGER NOT NULL,        -- not looked at before this time
  attempts INTEGER NOT NULL DEFAULT 0);
)sql";

}  // namespace

const std::vector<Migration>& control_plane_migrations() {
  static const std::vector<Migration> steps = {
      {1, kV1},
      {2, kV2Jobs},
      {3, kV3Slurm},
      {4, kV4Dashboard},
      {5, kV5Schedule},
      {6, kV6SlurmCancelKey},
      {7, kV7EngineColumns},
      {8, kV8SlurmTables},
      {9, kV9SlurmCleanups},
  };
  return steps;
}

}  // namespace batchai::control_plane
