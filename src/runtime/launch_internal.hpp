// Helpers shared by the launch-plan sources (private to the runtime module).
#pragma once
#include <filesystem>
#include <map>
#include <string>

#include "batchai/runtime/launch_plan.hpp"

namespace batchai::runtime::detail {

// docs/behaviour.md §4.8 variables that do not depend on the stdouterr folder, inputs, outputs or user values.
std::map<std::string, std::string> node_environment_base(const Job& job, const LaunchContext& context,
                                                         std::size_t node);
std::filesystem::path stdouterr_dir(const Job& job, const LaunchContext& context);
std::filesystem::path output_directory(const OutputDirectory& out, const Job& job,
                                       const std::map<std::string, std::string>& env);

}  // namespace batchai::runtime::detail
