// Launch plans: a pure function from (typed Job, the job's nodes and mounts) to what must
// run where — each node's folders and mount links, per-node preparation, the toolkit's main
// tasks (argv, env, cwd, output files), the MPI hostfile, folders to create and programs that
// must exist (docs/job-runtime.md §4.7-§4.9).
// Nothing here starts a process; the supervisor executes plans, tests inspect them.
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "batchai/common/process.hpp"
#include "batchai/runtime/job.hpp"
#include "batchai/runtime/mount_links.hpp"

namespace batchai::runtime {

// One simulated (or real) node the job runs on.
struct NodeInfo {
  std::string id;             // e.g. "tvm-1915592855_1-20180621t171517z"
  std::filesystem::path dir;  // the node folder (its layout: NodeDir)
  std::string host = "localhost";  // hostfile / TF host name or IP; nodes on one machine share it
  int gpus = 0;               // AZ_BATCHAI_NUM_GPUS; ranks get CUDA_VISIBLE_DEVICES when > 0
};

struct LaunchContext {
  std::vector<NodeInfo> nodes;                // the job's nodes; nodes[0] is the master
  bool as_root = false;                       // adds mpirun --allow-run-as-root
  int cores = 1;                              // cores of the launching machine (oversubscription)
  std::filesystem::path self_executable;      // batchai itself: rank wrapper and built-in trainer
  std::map<std::string, std::string> secrets;  // secret name -> real value (JobSpec::secrets)
  // The node's environment every task starts from (node_base_environment()); tasks inherit
  // nothing else from whoever runs the plan. Empty in tests that only inspect plans.
  std::map<std::string, std::string> base_env;
  // The job's mountVolumes as links beneath each node's $AZ_BATCHAI_JOB_MOUNT_ROOT, computed by
  // the control plane (it owns the mount rules and the storage layout).
  std::vector<MountLink> job_mounts;
  // mpirun --map-by ppr:SLOTS:node: inside a Slurm allocation Open MPI takes the slots from the
  // allocation and would fill the first node; this keeps the hostfile's placement (rank r on
  // node r / slots), which the rank wrapper assumes.
  bool mpi_map_by_node = false;
};

// One node's folders for the job (docs/job-runtime.md §4.7, §4.8).
struct NodeFolders {
  std::filesystem::path root;             // the node folder
  std::filesystem::path mount_root;       // $AZ_BATCHAI_MOUNT_ROOT
  std::filesystem::path job_temp_dir;     // $AZ_BATCHAI_JOB_TEMP_DIR
  std::filesystem::path job_temp;         // $AZ_BATCHAI_JOB_TEMP: the job's working folder
  std::filesystem::path job_mount_root;   // $AZ_BATCHAI_JOB_MOUNT_ROOT
  std::filesystem::path shared_job_temp;  // $AZ_BATCHAI_SHARED_JOB_TEMP (the master node's)
  std::filesystem::path stdouterr;        // $AZ_BATCHAI_STDOUTERR_DIR (one for the job)
};

struct NodePlan {
  std::string id;
  NodeFolders folders;
  std::vector<MountLink> links;  // to make beneath folders.job_mount_root (make_node_mounts)
};

enum class TaskRole { kPreparation, kMain, kWorker, kParameterServer };

struct TaskPlan {
  TaskRole role = TaskRole::kMain;
  int index = 0;            // task index within its role
  std::size_t node = 0;     // index into LaunchContext::nodes
  ProcessSpec process;      // argv, env (complete: clear_env), cwd, stdout/stderr files (new_session set)
  // False for tasks the job does not wait for (TensorFlow parameter servers): the supervisor
  // kills them once every waited-for task has exited.
  bool wait_for = true;
};

// A program the plan needs; the supervisor fails the job with `reason` when it is missing.
struct Requirement {
  std::string program;  // a name looked up on PATH, or a path
  std::string reason;   // "horovodSettings runs its script with 'python3'"
};

struct LaunchPlan {
  std::vector<NodePlan> nodes;                   // per node of LaunchContext::nodes, same order
  std::vector<TaskPlan> preparation;             // jobPreparation on every node (may be empty)
  std::vector<TaskPlan> tasks;                   // the toolkit's processes
  std::filesystem::path stdouterr_dir;           // {prefix}/{segment}/stdouterr
  std::filesystem::path execution_log;           // stdouterr_dir / "execution.log"
  std::filesystem::path hostfile;                // AZ_BATCHAI_MPI_HOST_FILE
  std::string hostfile_contents;                 // "localhost slots=4\n"
  std::filesystem::path rank_nodes_file;         // the rank wrapper's --nodes-file (MPI jobs)
  std::string rank_nodes_contents;               // JSON, see run_rank_exec
  std::map<std::string, std::filesystem::path> output_directories;  // id -> node 0's folder
  std::vector<std::filesystem::path> directories;  // to create before anything runs
  std::vector<Requirement> requirements;
};

// Builds the plan; InvalidArgument when the job or context cannot produce one.
LaunchPlan make_launch_plan(const Job& job, const LaunchContext& context);

// Makes the job-level mount links of every node of the plan (make_mount_links per node).
void make_node_mounts(const LaunchPlan& plan);

// The convention naming the built-in trainer in pythonScriptFilePath ("batchai-train" or
// "$BATCHAI_TRAIN" -> `<batchai> train <args>`).
inline constexpr const char* kBuiltinTrainerScript = "batchai-train";

}  // namespace batchai::runtime
