// Toolkit launch rules (spec §4.9): what each toolType runs, on which nodes, with which files.
#include "batchai/runtime/launch_plan.hpp"

#include <algorithm>
#include <set>

#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"
#include "batchai/runtime/job_spec.hpp"
#include "launch_internal.hpp"

namespace batchai::runtime {
namespace {

using Env = std::map<std::string, std::string>;

std::string str(const Json& obj, const char* key) {
  return obj.is_object() && obj.contains(key) && obj[key].is_string() ? obj[key].get<std::string>() : std::string();
}

int count(const Json& obj, const char* key, int fallback) {
  return obj.is_object() && obj.contains(key) && obj[key].is_number_integer() ? obj[key].get<int>() : fallback;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

class Planner {
 public:
  Planner(const Json& job, const LaunchContext& ctx) : job_(job), ctx_(ctx) {
    if (ctx.nodes.empty()) throw InvalidArgument("the job has no nodes to run on");
    tool_ = tool_type_from_name(str(job, "toolType"));
    settings_ = job.at(settings_key(tool_));
    for (std::size_t i = 0; i < ctx.nodes.size(); ++i) envs_.push_back(node_environment(job, ctx, i));
    plan_.stdouterr_dir = detail::stdouterr_dir(job, ctx);
    require_on_node(plan_.stdouterr_dir, "stdOutErrPathPrefix");
    plan_.execution_log = plan_.stdouterr_dir / "execution.log";
    plan_.hostfile = envs_[0].at("AZ_BATCHAI_MPI_HOST_FILE");
    plan_.rank_nodes_file = detail::node_folders(job, ctx, 0).shared_job_temp / "rank-nodes.json";
  }

  // Output folders, once expanded, lie under a node's mount root or job temp folder (job files
  // are checked at create; this also holds for documents stored before that check).
  void require_on_node(const std::filesystem::path& folder, const std::string& field) const {
    const auto normal = folder.lexically_normal();
    for (std::size_t i = 0; i < ctx_.nodes.size(); ++i) {
      const auto f = detail::node_folders(job_, ctx_, i);
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
    const int nodes = static_cast<int>(ctx_.nodes.size());
    const int processes = count(settings_, "processCount", nodes);
    switch (tool_) {
      case ToolType::kCustom: add_main(0, {"bash", "-c", str(settings_, "commandLine")}, "bash"); break;
      case ToolType::kCustomMpi: add_mpi(processes, {"bash", "-c", str(settings_, "commandLine")}); break;
      case ToolType::kHorovod:
      case ToolType::kChainer: add_mpi(processes, python_argv(str(settings_, "commandLineArgs"))); break;
      case ToolType::kCntk:
        if (str(settings_, "languageType") == "BrainScript" || str(settings_, "pythonScriptFilePath").empty()) {
          add_maybe_mpi(processes, program_argv("cntk", "configFile=" + quoted_path("configFilePath")));
        } else {
          add_mpi(processes, python_argv(str(settings_, "commandLineArgs")));
        }
        break;
      case ToolType::kCaffe:
        if (!str(settings_, "configFilePath").empty()) {
          add_maybe_mpi(processes, program_argv("caffe", "train --solver=" + quoted_path("configFilePath")));
        } else {
          add_maybe_mpi(processes, python_argv(str(settings_, "commandLineArgs")));
        }
        break;
      case ToolType::kCaffe2: add_per_node(); break;
      case ToolType::kPyTorch:
        if (iequals(str(settings_, "communicationBackend"), "mpi")) {
          add_mpi(processes, python_argv(str(settings_, "commandLineArgs")));
        } else {
          add_per_node();
        }
        break;
      case ToolType::kTensorFlow: add_tensorflow(); break;
    }
    return std::move(plan_);
  }

 private:
  void add_directories() {
    std::set<std::filesystem::path> dirs = {plan_.stdouterr_dir};
    for (std::size_t i = 0; i < ctx_.nodes.size(); ++i) {
      auto f = detail::node_folders(job_, ctx_, i);
      dirs.insert({f.mount_root, f.job_temp, f.job_mount_root, f.shared_job_temp});
    }
    if (job_.contains("outputDirectories") && job_["outputDirectories"].is_array()) {
      for (const auto& out : job_["outputDirectories"]) {
        const std::string id = out.at("id");
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
    }
    plan_.directories.assign(dirs.begin(), dirs.end());
  }

  ProcessSpec process(std::size_t node, std::vector<std::string> argv, const std::string& out, const std::string& err) {
    ProcessSpec p;
    p.argv = std::move(argv);
    p.env = envs_[node];
    p.clear_env = true;  // the node's environment and the job's variables, nothing of the supervisor's
    p.cwd = detail::node_folders(job_, ctx_, node).job_temp;
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
    if (!job_.contains("jobPreparation") || !job_["jobPreparation"].is_object()) return;
    const std::string command = str(job_["jobPreparation"], "commandLine");
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

  std::string quoted_path(const char* key) { return shell_quote(expand_env_vars(str(settings_, key), envs_[0])); }

  // `bash -c "exec <program> <fixed> <commandLineArgs>"`: the args are shell text ($VARS, quotes),
  // expanded per rank/node by bash in that task's environment.
  std::vector<std::string> program_argv(const std::string& program, const std::string& fixed) {
    require(program, tool_type_name(tool_) + " jobs run '" + program + "'");
    require("bash", "toolkit command lines are run with bash");
    std::string line = "exec " + shell_quote(program) + " " + fixed;
    const std::string args = str(settings_, "commandLineArgs");
    if (!args.empty()) line += " " + args;
    return {"bash", "-c", line};
  }

  std::vector<std::string> python_argv(const std::string& args) {
    const std::string raw_script = str(settings_, "pythonScriptFilePath");
    const std::string script = expand_env_vars(raw_script, envs_[0]);
    std::string line;
    if (raw_script == kBuiltinTrainerScript || raw_script == "$BATCHAI_TRAIN" || raw_script == "${BATCHAI_TRAIN}") {
      if (ctx_.self_executable.empty()) throw InvalidArgument("the built-in trainer needs the batchai executable's path");
      line = "exec " + shell_quote(ctx_.self_executable.string()) + " train";
    } else {
      std::string python = str(settings_, "pythonInterpreterPath");
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
                       {"cwd", detail::node_folders(job_, ctx_, i).job_temp.string()},
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
    argv.insert(argv.end(), {"--bind-to", "none"});
    for (const auto& [name, value] : envs_[0]) argv.insert(argv.end(), {"-x", name});
    argv.insert(argv.end(), {ctx_.self_executable.string(), kRankExecCommand, "--nodes-file",
                             plan_.rank_nodes_file.string(), "--"});
    argv.insert(argv.end(), program.begin(), program.end());
    add_main(0, std::move(argv), "");
  }

  void add_per_node() {
    auto argv = python_argv(str(settings_, "commandLineArgs"));
    const bool pytorch = tool_ == ToolType::kPyTorch;
    const auto shared = detail::node_folders(job_, ctx_, 0).shared_job_temp;
    for (std::size_t i = 0; i < ctx_.nodes.size(); ++i) {
      TaskPlan t;
      t.index = static_cast<int>(i);
      t.node = i;
      t.process = process(i, argv, "stdout-" + std::to_string(i) + ".txt", "stderr-" + std::to_string(i) + ".txt");
      t.process.env["AZ_BATCHAI_TASK_INDEX"] = std::to_string(i);
      if (pytorch) {
        t.process.env["AZ_BATCHAI_PYTORCH_INIT_METHOD"] = "file://" + (shared / "pytorch_init").string();
        std::string backend = str(settings_, "communicationBackend");
        t.process.env["AZ_BATCHAI_PYTORCH_BACKEND"] = backend.empty() ? "gloo" : to_lower(backend);
      }
      plan_.tasks.push_back(std::move(t));
    }
  }

  void add_tensorflow() {
    const int n = static_cast<int>(ctx_.nodes.size());
    const int workers = count(settings_, "workerCount", n);
    const int ps = count(settings_, "parameterServerCount", workers > 1 ? 1 : 0);
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
      std::string args = is_ps ? str(settings_, "parameterServerCommandLineArgs")
                         : i == 0 && !str(settings_, "masterCommandLineArgs").empty() ? str(settings_, "masterCommandLineArgs")
                                                                                     : str(settings_, "workerCommandLineArgs");
      const std::string tag = is_ps ? "ps-" : "wk-";
      TaskPlan t;
      t.role = role;
      t.index = i;
      t.node = node;
      t.wait_for = !is_ps;
      t.process = process(node, python_argv(args), "stdout-" + tag + std::to_string(i) + ".txt",
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

  const Json& job_;
  const LaunchContext& ctx_;
  ToolType tool_;
  Json settings_;
  std::vector<Env> envs_;
  LaunchPlan plan_;
};

}  // namespace

LaunchPlan make_launch_plan(const Json& job, const LaunchContext& context) { return Planner(job, context).build(); }

}  // namespace batchai::runtime
