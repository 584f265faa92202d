// Toolkit launch rules (docs/job-runtime.md §4.9): what each toolType runs, on which nodes, with which files.
#include "batchai/runtime/launch_plan.hpp"

#include <algorithm>
#include <set>

#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"
#include "batchai/common/json_util.hpp"
#include "batchai/runtime/job_spec.hpp"
#include "batchai/runtime/rank_exec.hpp"
#include "launch_env.hpp"

namespace batchai::runtime {
namespace {

using Env = std::map<std::string, std::string>;

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

class Planner {
 public:
  Planner(const Job& job, const LaunchContext& ctx) : job_(job), ctx_(ctx) {
    if (ctx.nodes.empty()) throw InvalidArgument("the job has no nodes to run on");
    tool_ = job.tool_type();
    for (std::size_t i = 0; i < ctx.nodes.size(); ++i) {
      envs_.push_back(node_environment(job, ctx, i));
      plan_.nodes.push_back({ctx.nodes[i].id, node_folders(job, ctx, i), ctx.job_mounts});
    }
    plan_.stdouterr_dir = plan_.nodes[0].folders.stdouterr;
    require_on_node(plan_.stdouterr_dir, "stdOutErrPathPrefix");
    plan_.execution_log = plan_.stdouterr_dir / "execution.log";
    plan_.hostfile = envs_[0].at("AZ_BATCHAI_MPI_HOST_FILE");
    plan_.rank_nodes_file = folders(0).shared_job_temp / "rank-nodes.json";
  }

  const NodeFolders& folders(std::size_t node) const { return plan_.nodes.at(node).folders; }

  // Output folders, once expanded, lie under a node's mount root or job temp folder (job files
  // are checked at create; this also holds for documents stored before that check).
  void require_on_node(const std::filesystem::path& folder, const std::string& field) const {
    const auto normal = folder.lexically_normal();
    for (const auto& n : plan_.nodes) {
      const auto& f = n.folders;
      for (const auto& root : {f.mount_root.lexically_normal(), f.job_temp_dir.lexically_normal()}) {
        const auto rel = normal.lexically_relative(root);
        if (!rel.empty() && *rel.begin() != "..") return;
      }
    }
    throw InvalidArgument(field + " leads to '" + folder.string() +
                          "', outside the job's mounts and folders; start it with $AZ_BATCHAI_MOUNT_ROOT or "
                          "$AZ_BATCHAI_JOB_MOUNT_ROOT.");
  }

  LaunchPlan build() {
    add_directories();
    add_preparation();
    std::visit([this](const auto& toolkit) { add_toolkit(toolkit); }, job_.toolkit);
    return std::move(plan_);
  }

 private:
  // The toolkit's processes: one overload per toolType.
  void add_toolkit(const CustomToolkit& t) { add_main(0, {"bash", "-c", t.command_line}, "bash"); }
  void add_toolkit(const CustomMpiToolkit& t) { add_mpi(t.process_count, {"bash", "-c", t.command_line}); }
  void add_toolkit(const HorovodToolkit& t) { add_mpi(t.process_count, python_argv(t, t.command_line_args)); }
  void add_toolkit(const ChainerToolkit& t) { add_mpi(t.process_count, python_argv(t, t.command_line_args)); }
  void add_toolkit(const CntkToolkit& t) {
    if (t.language_type == "BrainScript" || t.script_file_path.empty()) {
      add_maybe_mpi(t.process_count, program_argv("cntk", "configFile=" + quoted_path(t.config_file_path), t));
    } else {
      add_mpi(t.process_count, python_argv(t, t.command_line_args));
    }
  }
  void add_toolkit(const CaffeToolkit& t) {
    if (!t.config_file_path.empty()) {
      add_maybe_mpi(t.process_count, program_argv("caffe", "train --solver=" + quoted_path(t.config_file_path), t));
    } else {
      add_maybe_mpi(t.process_count, python_argv(t, t.command_line_args));
    }
  }
  void add_toolkit(const Caffe2Toolkit& t) { add_per_node(t, ""); }
  void add_toolkit(const PyTorchToolkit& t) {
    if (iequals(t.communication_backend, "mpi")) {
      add_mpi(t.process_count, python_argv(t, t.command_line_args));
    } else {
      add_per_node(t, t.communication_backend.empty() ? "gloo" : to_lower(t.communication_backend));
    }
  }
  void add_toolkit(const TensorFlowToolkit& t) { add_tensorflow(t); }


  void add_directories() {
    std::set<std::filesystem::path> dirs = {plan_.stdouterr_dir};
    for (const auto& n : plan_.nodes) {
      const auto& f = n.folders;
      dirs.insert({f.mount_root, f.job_temp, f.job_mount_root, f.shared_job_temp});
    }
    for (const auto& out : job_.output_directories) {
      const std::string& id = out.id;
      for (const auto& env : envs_) {
        const std::filesystem::path dir = env.at("AZ_BATCHAI_OUTPUT_" + id);
        if (std::any_of(dir.begin(), dir.end(), [](const auto& part) { return part == ".."; }))
          throw InvalidArgument("outputDirectories[id=" + id + "] leads to '" + dir.string() +
                                "': a pathSuffix may not leave its output directory ('..').");
        require_on_node(dir, "outputDirectories[id=" + id + "]");
        dirs.insert(dir);
      }
      plan_.output_directories[id] = envs_[0].at("AZ_BATCHAI_OUTPUT_" + id);
    }
    plan_.directories.assign(dirs.begin(), dirs.end());
  }

  ProcessSpec process(std::size_t node, std::vector<std::string> argv, const std::string& out, const std::string& err) {
    ProcessSpec p;
    p.argv = std::move(argv);
    p.env = envs_[node];
    p.clear_env = true;  // the node's environment and the job's variables, nothing of the supervisor's
    p.cwd = folders(node).job_temp;
    p.stdout_file = plan_.stdouterr_dir / out;
    p.stderr_file = plan_.stdouterr_dir / err;
    p.append = true;  // several ranks/tasks may share a file; the supervisor starts from empty folders
    return p;
  }

  void require(const std::string& program, const std::string& why) {
    for (const auto& r : plan_.requirements) {
      if (r.program == program) return;
    }
    plan_.requirements.push_back({program, why});
  }

  void add_preparation() {
    if (!job_.job_preparation) return;
    const std::string& command = *job_.job_preparation;
    require("bash", "jobPreparation runs its command line with bash");
    const bool single = ctx_.nodes.size() == 1;
    for (std::size_t i = 0; i < ctx_.nodes.size(); ++i) {
      const std::string suffix = single ? "" : "-" + ctx_.nodes[i].id;
      TaskPlan t;
      t.role = TaskRole::kPreparation;
      t.index = static_cast<int>(i);
      t.node = i;
      t.process = process(i, {"bash", "-c", command}, "stdout-job_prep" + suffix + ".txt",
                          "stderr-job_prep" + suffix + ".txt");
      plan_.preparation.push_back(std::move(t));
    }
  }

  std::string quoted_path(const std::string& path) { return shell_quote(expand_env_vars(path, envs_[0])); }

  // `bash -c "exec <program> <fixed> <commandLineArgs>"`: the args are shell text ($VARS, quotes),
  // expanded per rank/node by bash in that task's environment.
  std::vector<std::string> program_argv(const std::string& program, const std::string& fixed, const PythonScript& s) {
    require(program, tool_type_name(tool_) + " jobs run '" + program + "'");
    require("bash", "toolkit command lines are run with bash");
    std::string line = "exec " + shell_quote(program) + " " + fixed;
    const std::string& args = s.command_line_args;
    if (!args.empty()) line += " " + args;
    return {"bash", "-c", line};
  }

  std::vector<std::string> python_argv(const PythonScript& s, const std::string& args) {
    const std::string& raw_script = s.script_file_path;
    const std::string script = expand_env_vars(raw_script, envs_[0]);
    std::string line;
    if (raw_script == kBuiltinTrainerScript || raw_script == "$BATCHAI_TRAIN" || raw_script == "${BATCHAI_TRAIN}") {
      if (ctx_.self_executable.empty()) throw InvalidArgument("the built-in trainer needs the batchai executable's path");
      line = "exec " + shell_quote(ctx_.self_executable.string()) + " train";
    } else {
      std::string python = s.interpreter_path;
      python = python.empty() ? "python3" : expand_env_vars(python, envs_[0]);
      require(python, settings_key(tool_) + " runs its script with the Python interpreter '" + python +
                          "'; install it or set pythonInterpreterPath");
      line = "exec " + shell_quote(python) + " " + shell_quote(script);
    }
    require("bash", "toolkit command lines are run with bash");
    if (!args.empty()) line += " " + args;
    return {"bash", "-c", line};
  }

  void add_main(std::size_t node, std::vector<std::string> argv, const std::string& program) {
    if (!program.empty()) require(program, tool_type_name(tool_) + " jobs run their command line with " + program);
    TaskPlan t;
    t.node = node;
    t.process = process(node, std::move(argv), "stdout.txt", "stderr.txt");
    plan_.tasks.push_back(std::move(t));
  }

  void add_maybe_mpi(int processes, std::vector<std::string> argv) {
    if (processes > 1) add_mpi(processes, std::move(argv));
    else add_main(0, std::move(argv), "");
  }

  // mpirun on the master node; each rank starts in the rank wrapper, which moves it into its
  // node's folder and environment.
  void add_mpi(int processes, std::vector<std::string> program) {
    if (processes < 1) throw InvalidArgument("processCount must be at least 1");
    if (ctx_.self_executable.empty()) throw InvalidArgument("MPI jobs need the batchai executable's path (rank wrapper)");
    require("mpirun", tool_type_name(tool_) + " jobs are launched with mpirun (Open MPI)");
    const int n = static_cast<int>(ctx_.nodes.size());
    const int slots = (processes + n - 1) / n;
    // Hostfile: one line per distinct host, slots summed (nodes on one machine share a host).
    std::vector<std::pair<std::string, int>> hosts;
    for (const auto& node : ctx_.nodes) {
      auto it = std::find_if(hosts.begin(), hosts.end(), [&](const auto& h) { return h.first == node.host; });
      if (it == hosts.end()) hosts.emplace_back(node.host, slots);
      else it->second += slots;
    }
    for (const auto& [host, s] : hosts) plan_.hostfile_contents += host + " slots=" + std::to_string(s) + "\n";
    Json nodes = Json::array();
    for (std::size_t i = 0; i < ctx_.nodes.size(); ++i) {
      nodes.push_back({{"id", ctx_.nodes[i].id},
                       {"cwd", folders(i).job_temp.string()},
                       {"gpus", ctx_.nodes[i].gpus},
                       {"env", envs_[i]}});
    }
    // Secrets stay out of the file: the ranks inherit them from mpirun's environment.
    for (auto& node : nodes) {
      for (const auto& [name, value] : ctx_.secrets) node["env"].erase(name);
    }
    plan_.rank_nodes_contents = Json{{"slots", slots}, {"nodes", nodes}}.dump(2) + "\n";

    std::vector<std::string> argv = {"mpirun", "-np", std::to_string(processes), "--hostfile", plan_.hostfile.string()};
    if (ctx_.as_root) argv.push_back("--allow-run-as-root");
    if (processes > ctx_.cores) argv.push_back("--oversubscribe");
    if (ctx_.mpi_map_by_node) argv.insert(argv.end(), {"--map-by", "ppr:" + std::to_string(slots) + ":node"});
    argv.insert(argv.end(), {"--bind-to", "none"});
    for (const auto& [name, value] : envs_[0]) argv.insert(argv.end(), {"-x", name});
    argv.insert(argv.end(), {ctx_.self_executable.string(), kRankExecCommand, "--nodes-file",
                             plan_.rank_nodes_file.string(), "--"});
    argv.insert(argv.end(), program.begin(), program.end());
    add_main(0, std::move(argv), "");
  }

  // One process per node (Caffe2, PyTorch without MPI); `pytorch_backend` empty for Caffe2.
  void add_per_node(const PythonScript& s, const std::string& pytorch_backend) {
    auto argv = python_argv(s, s.command_line_args);
    const bool pytorch = tool_ == ToolType::kPyTorch;
    const auto shared = folders(0).shared_job_temp;
    for (std::size_t i = 0; i < ctx_.nodes.size(); ++i) {
      TaskPlan t;
      t.index = static_cast<int>(i);
      t.node = i;
      t.process = process(i, argv, "stdout-" + std::to_string(i) + ".txt", "stderr-" + std::to_string(i) + ".txt");
      t.process.env["AZ_BATCHAI_TASK_INDEX"] = std::to_string(i);
      if (pytorch) {
        t.process.env["AZ_BATCHAI_PYTORCH_INIT_METHOD"] = "file://" + (shared / "pytorch_init").string();
        t.process.env["AZ_BATCHAI_PYTORCH_BACKEND"] = pytorch_backend;
      }
      plan_.tasks.push_back(std::move(t));
    }
  }

  void add_tensorflow(const TensorFlowToolkit& tf) {
    const int n = static_cast<int>(ctx_.nodes.size());
    const int workers = tf.worker_count.value_or(n);
    const int ps = tf.parameter_server_count.value_or(workers > 1 ? 1 : 0);
    if (workers < 1) throw InvalidArgument("tensorFlowSettings.workerCount must be at least 1");
    // Ports from 2222 upward per host: parameter servers first, then workers (as observed).
    std::map<std::string, int> next_port;
    auto address = [&](int task) {
      const auto& host = ctx_.nodes[static_cast<std::size_t>(task % n)].host;
      auto [it, inserted] = next_port.try_emplace(host, 2222);
      return host + ":" + std::to_string(it->second++);
    };
    std::vector<std::string> ps_hosts, worker_hosts;
    for (int i = 0; i < ps; ++i) ps_hosts.push_back(address(i));
    for (int i = 0; i < workers; ++i) worker_hosts.push_back(address(i));
    auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
      return s;
    };
    auto add = [&](TaskRole role, int i) {
      const bool is_ps = role == TaskRole::kParameterServer;
      const std::size_t node = static_cast<std::size_t>(i % n);
      std::string args = is_ps                                               ? tf.parameter_server_command_line_args
                         : i == 0 && !tf.master_command_line_args.empty() ? tf.master_command_line_args
                                                                           : tf.worker_command_line_args;
      const std::string tag = is_ps ? "ps-" : "wk-";
      TaskPlan t;
      t.role = role;
      t.index = i;
      t.node = node;
      t.wait_for = !is_ps;
      t.process = process(node, python_argv(tf, args), "stdout-" + tag + std::to_string(i) + ".txt",
                          "stderr-" + tag + std::to_string(i) + ".txt");
      auto& env = t.process.env;
      env["AZ_BATCHAI_TASK_INDEX"] = std::to_string(i);
      env["AZ_BATCHAI_PS_HOSTS"] = join(ps_hosts);
      env["AZ_BATCHAI_WORKER_HOSTS"] = join(worker_hosts);
      Json config = {{"cluster", {{"ps", ps_hosts}, {"worker", worker_hosts}}},
                     {"task", {{"type", is_ps ? "ps" : i == 0 ? "master" : "worker"}, {"index", i}}},
                     {"environment", "cloud"}};
      env["TF_CONFIG"] = config.dump();
      plan_.tasks.push_back(std::move(t));
    };
    for (int i = 0; i < ps; ++i) add(TaskRole::kParameterServer, i);
    for (int i = 0; i < workers; ++i) add(TaskRole::kWorker, i);
  }

  const Job& job_;
  const LaunchContext& ctx_;
  ToolType tool_;
  std::vector<Env> envs_;
  LaunchPlan plan_;
};

}  // namespace

LaunchPlan make_launch_plan(const Job& job, const LaunchContext& context) { return Planner(job, context).build(); }

void make_node_mounts(const LaunchPlan& plan) {
  for (const auto& node : plan.nodes) make_mount_links(node.links, node.folders.job_mount_root);
}

}  // namespace batchai::runtime
