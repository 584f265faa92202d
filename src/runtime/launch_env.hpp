// Each node's folders and environment for a job, and $VAR expansion (launch_env.cpp); internal:
// the launch planner uses them, white-box tests check them.
#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "batchai/runtime/job.hpp"
#include "batchai/runtime/launch_plan.hpp"

namespace batchai::runtime {

// The folders of node `node` of the context for this job.
NodeFolders node_folders(const Job& job, const LaunchContext& context, std::size_t node);

// Expands $VAR and ${VAR} from `env`; unknown variables are left as written ("$HOME" stays).
std::string expand_env_vars(std::string_view text, const std::map<std::string, std::string>& env);

// The whole environment of a job's process on one node: the node's base (LaunchContext::base_env)
// plus docs/job-runtime.md §4.8 (mount roots, job temps, stdouterr dir, host file, GPUs, host list,
// inputs/outputs), then the job's environmentVariables and secrets.
std::map<std::string, std::string> node_environment(const Job& job, const LaunchContext& context, std::size_t node);

}  // namespace batchai::runtime
