// The checks az makes on its command line before it sends a request, in az's words (they name
// its flags). The control plane checks the same values again, in the API's words (property
// names), for every caller: this layer only decides which message a CLI user sees.
#pragma once
#include "batchai/control_plane/options.hpp"
#include "command.hpp"

namespace batchai::cli {

// --target/--min/--max of `cluster create` and `resize`: "--target must be 0 or more nodes, got -1."
void check_node_count_flags(const Args& args);
// --min/--max of `cluster auto-scale`.
void check_auto_scale_flags(const Args& args);
// --image, --custom-image and --setup-task/--setup-task-output of `cluster create`.
void check_cluster_create_flags(const control_plane::ClusterCreateOptions& options);
// --expiry of `job file list` ("between 5 and 600 minutes") and `cluster file list` ("at least 5 and at most 600").
void check_job_file_expiry(const Args& args);
void check_cluster_file_expiry(const Args& args);

}  // namespace batchai::cli
