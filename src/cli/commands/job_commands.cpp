// `batchai job create|show|list|delete|terminate|wait`, `job file list|stream` and
// `job node list|exec` (docs/behaviour.md §1.3.4-1.3.5, §4.10.3-4.10.4). The jobs service does the work;
// `wait` and `stream` are client-side loops over it, as in the original CLI.
#include "commands/job_commands.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <iostream>
#include <thread>

#include "batchai/common/errors.hpp"
#include "batchai/common/log.hpp"
#include "batchai/control_plane/jobs.hpp"
#include "commands/common.hpp"
#include "commands/flag_checks.hpp"
#include "output/transformers.hpp"

namespace batchai::cli {

namespace {

using control_plane::JobRef;
using control_plane::Jobs;

// The jobs service of the lazily opened control plane.
struct JobsHolder {
  CliContext& ctx;
  Jobs& get() { return ctx.control_plane().jobs(); }
};

OptionSpec optional(const std::string& group, const std::string& default_value = {}, bool integer = false) {
  OptionSpec s;
  s.group = group;
  s.default_value = default_value;
  s.integer = integer;
  return s;
}

Command& add_job_scope(Command& c) {
  return add_workspace(add_resource_group(c)).option("--experiment,-e", "Name of experiment.", required());
}

JobRef job_ref(const Args& a, const char* name_key) { return {workspace_ref(a), a.str("experiment"), a.str(name_key)}; }

std::string python_time(const Json& iso) {
  if (!iso.is_string()) return "None";
  auto t = parse_iso(iso.get<std::string>());
  return t ? format_python_str(*t) : iso.get<std::string>();
}

std::string took(const Json& info) {
  auto start = parse_iso(value_or<std::string>(info, "startTime", ""));
  auto end = parse_iso(value_or<std::string>(info, "endTime", ""));
  if (!start || !end) return "None";
  return format_timedelta(*end - *start);
}

// docs/job-runtime.md §4.10.3: warnings only; returns the exit code of `job wait`: 0 when the job succeeded, the
// job's exit code when it failed (0 when it has none), 255 when a failed job has no execution info.
int wait_for_job(Jobs& jobs, const JobRef& ref, int interval_s) {
  Json job = jobs.show(ref);
  log::warning("Job submitted at " + python_time(job["creationTime"]));
  bool started = false;
  std::string state;
  for (;;) {
    const Json& info = job["executionInfo"];
    if (!started && info.is_object()) {
      started = true;
      log::warning("Job started execution at " + python_time(info["startTime"]));
    }
    const std::string now = value_or<std::string>(job, "executionState", "");
    if (now != state) {
      state = now;
      log::warning("Job state: " + state);
    }
    if (state == "succeeded") {
      log::warning("Job completed at " + python_time(info["endTime"]) + "; execution took " + took(info));
      return 0;
    }
    if (state == "failed") {
      log::warning("The job \"" + ref.name + "\" in resource group \"" + ref.where.resource_group + "\" failed.");
      if (!info.is_object()) {
        log::warning("Failed job has no execution info");
        return 255;
      }
      const Json& code = info["exitCode"];
      log::warning("Job failed with exit code " + (code.is_null() ? std::string("None") : code.dump()) + " at " +
                   python_time(info["endTime"]) + "; execution took " + took(info));
      if (info["errors"].is_array()) {
        for (const auto& e : info["errors"]) {
          std::string details = "<none>";
          if (e["details"].is_array() && !e["details"].empty()) {
            details.clear();
            for (const auto& d : e["details"])
              details += "\n" + value_or<std::string>(d, "name", "") + ": " + value_or<std::string>(d, "value", "");
          }
          log::warning("Error message: " + value_or<std::string>(e, "message", "") + "\nDetails:\n " + details);
        }
      }
      return code.is_number_integer() ? code.get<int>() : 0;
    }
    std::this_thread::sleep_for(std::chrono::seconds(interval_s));
    job = jobs.show(ref);
  }
}

// docs/job-runtime.md §4.10.4: wait for the file, then print what gets appended until the job ends (plus the tail).
// The file is opened once, confined to its output folder, and read in fixed-size chunks, so a
// link the job planted cannot lead out and a huge stdout.txt never sits in memory.
void stream_file(Jobs& jobs, const JobRef& ref, const std::string& dir_id, const std::string& path,
                 const std::string& file_name) {
  auto finished = [&] {
    std::string s = value_or<std::string>(jobs.show(ref), "executionState", "");
    return s == "succeeded" || s == "failed";
  };
  const auto poll = std::chrono::milliseconds(500);
  confine_relative(file_name, "The file name", "the output directory '" + dir_id + "'");  // before any waiting
  std::optional<UniqueFd> file;
  bool told = false;
  for (;;) {
    if (auto folder = jobs.output_folder(ref, dir_id, path)) {
      file = folder->open_file(file_name, "The file name");
      if (file) {
        const std::string url = (folder->path() / folder->check(file_name, "The file name")).string();
        log::warning("File found with URL \"file://" + std::filesystem::absolute(url).string() + "\". Start streaming");
        break;
      }
    }
    if (finished()) {
      log::warning("The file \"" + file_name + "\" not found for the completed job.");
      return;
    }
    if (!told) log::warning("The file \"" + file_name + "\" not found. Waiting for the job to generate it.");
    told = true;
    std::this_thread::sleep_for(poll);
  }
  std::vector<char> chunk(1 << 16);
  auto print_new = [&] {
    for (;;) {
      const ssize_t n = ::read(file->get(), chunk.data(), chunk.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      std::fwrite(chunk.data(), 1, static_cast<std::size_t>(n), stdout);
    }
    std::fflush(stdout);
  };
  for (;;) {
    print_new();
    if (finished()) {
      print_new();  // the tail written while the job ended
      return;
    }
    std::this_thread::sleep_for(poll);
  }
}

void register_create(CLI::App& group, CliContext& ctx, std::shared_ptr<JobsHolder> jobs) {
  auto& create = add_command(group, ctx, "create", "Create a job.");
  add_job_scope(create)
      .option("--name,-n", "Name of job.", required())
      .option("--config-file,-f", "A path to a json file containing job create parameters "
              "(json representation of azure.mgmt.batchai.models.JobCreateParameters).", required())
      .option("--cluster,-c", "Name or ARM ID of the cluster to run the job.", required());
  add_mount_options(create, "during the job")
      .example("Create a job to run on a cluster in the same resource group.",
               "batchai job create -g MyResourceGroup -w MyWorkspace -e MyExperiment -n MyJob "
               "-c MyCluster -f job.json")
      .handler([jobs](const Args& a) -> std::optional<Json> {
        control_plane::JobCreateOptions o;
        o.where = workspace_ref(a);
        o.experiment = a.str("experiment");
        o.name = a.str("name");
        o.config = *config_document(a);
        o.cluster = a.get("cluster");
        o.mounts = mount_options(a);
        return jobs->get().create(o);
      });
}

void register_basic(CLI::App& group, CliContext& ctx, std::shared_ptr<JobsHolder> jobs) {
  auto& show = add_command(group, ctx, "show", "Show information about a job.");
  add_job_scope(show)
      .option("--name,-n", "Name of job.", required())
      .show()
      .table(output::job_table)
      .handler([jobs](const Args& a) -> std::optional<Json> { return jobs->get().show(job_ref(a, "name")); });

  auto& list = add_command(group, ctx, "list", "List jobs.");
  add_job_scope(list)
      .table(output::job_table, output::kJobTableFields)
      .example("List jobs.", "batchai job list -g MyResourceGroup -w MyWorkspace -e MyExperiment -o table")
      .handler([jobs](const Args& a) -> std::optional<Json> {
        return jobs->get().list(workspace_ref(a), a.str("experiment"), a.table_fields());
      });

  auto& del = add_command(group, ctx, "delete", "Delete a job (a running job is terminated first).");
  add_job_scope(del)
      .option("--name,-n", "Name of job.", required())
      .flag("--no-wait", "Do not wait for the long-running operation to finish.")
      .confirmation()
      .handler([jobs](const Args& a) -> std::optional<Json> {
        jobs->get().remove(job_ref(a, "name"));
        return std::nullopt;
      });

  auto& terminate = add_command(group, ctx, "terminate", "Terminate a job.");
  add_job_scope(terminate)
      .option("--name,-n", "Name of job.", required())
      .flag("--no-wait", "Do not wait for the long-running operation to finish.")
      .confirmation()
      .handler([jobs](const Args& a) -> std::optional<Json> {
        jobs->get().terminate(job_ref(a, "name"));
        return std::nullopt;
      });

  auto& wait = add_command(group, ctx, "wait", "Wait for a job completion and set the exit code to the job's exit code.");
  add_job_scope(wait)
      .option("--name,-n", "Name of job.", required())
      .option("--interval", "Polling interval in sec.", optional("", "15", true))
      .example("Wait for the job completion.", "batchai job wait -g MyResourceGroup -w MyWorkspace -e MyExperiment -n MyJob")
      .handler([jobs](const Args& a) {
        const int interval = a.integer("interval").value_or(15);
        if (interval < 0) throw InvalidArgument("--interval must be 0 or more seconds.");
        return CommandResult::exit_code_only(wait_for_job(jobs->get(), job_ref(a, "name"), interval));
      });
}

void register_files_and_nodes(CLI::App& group, CliContext& ctx, std::shared_ptr<JobsHolder> jobs) {
  CLI::App& file = add_group(group, ctx, "file", "Commands to list and stream files in job's output directories.");
  auto& file_list = add_command(file, ctx, "list", "List job's output files in a directory with given id.");
  add_job_scope(file_list)
      .option("--job,-j", "Name of job.", required())
      .option("--output-directory-id,-d", "The Id of the job's output directory (as specified by \"id\" element in "
              "outputDirectories collection in the job create parameters).", optional("", "stdouterr"))
      .option("--path,-p", "The relative path in the given output directory.", optional("", "."))
      .option("--expiry", "Time in minutes for how long generated download URL should remain valid.",
              optional("", "60", true))
      .table(output::job_file_table)
      .handler([jobs](const Args& a) -> std::optional<Json> {
        check_job_file_expiry(a);
        return jobs->get().file_list(job_ref(a, "job"), a.str("output-directory-id"), a.str("path"),
                                     a.integer("expiry").value_or(60));
      });

  auto& stream = add_command(file, ctx, "stream", "Stream the content of a file (until the job completes).");
  add_job_scope(stream)
      .option("--job,-j", "Name of job.", required())
      .option("--file-name,-f", "The name of the file to stream.", required())
      .option("--output-directory-id,-d", "The Id of the job's output directory.", optional("", "stdouterr"))
      .option("--path,-p", "The relative path in the given output directory.", optional("", "."))
      .exit_zero_on_interrupt()
      .handler([jobs](const Args& a) -> std::optional<Json> {
        stream_file(jobs->get(), job_ref(a, "job"), a.str("output-directory-id"), a.str("path"), a.str("file-name"));
        return std::nullopt;
      });

  CLI::App& node = add_group(group, ctx, "node", "Commands to work with nodes which executed a job.");
  auto& node_list = add_command(node, ctx, "list", "List remote login information for nodes which executed the job.");
  add_job_scope(node_list)
      .option("--job,-j", "Name of job.", required())
      .table(output::remote_login_table)
      .handler([jobs](const Args& a) -> std::optional<Json> { return jobs->get().node_list(job_ref(a, "job")); });

  auto& exec = add_command(node, ctx, "exec", "Execute a command line on a cluster's node used to execute the job.");
  add_node_exec_options(add_job_scope(exec).option("--job,-j", "Name of job.", required()),
                        "ID of the node to run the command on; the job's first node when omitted.")
      .handler([jobs](const Args& a) -> std::optional<Json> {
        jobs->get().node_exec(job_ref(a, "job"), node_exec_options(a));
        return std::nullopt;
      });
}

}  // namespace

void register_job_commands(CLI::App& group, CliContext& ctx) {
  auto jobs = std::make_shared<JobsHolder>(JobsHolder{ctx});
  register_create(group, ctx, jobs);
  register_basic(group, ctx, jobs);
  register_files_and_nodes(group, ctx, jobs);
}

}  // namespace batchai::cli
