// The folders of one node (docs/job-runtime.md §4.7) and of a job on it: the one type that names them, for the
// control plane (node folders, setup tasks) and the launch plan (job folders, environment).
#pragma once
#include <filesystem>
#include <string>

namespace batchai::runtime {

class NodeDir {
 public:
  explicit NodeDir(std::filesystem::path root) : root_(std::move(root)) {}

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path mounts() const { return root_ / "mounts"; }  // $AZ_BATCHAI_MOUNT_ROOT
  std::filesystem::path jobs() const { return root_ / "jobs"; }      // $AZ_BATCHAI_JOB_TEMP_DIR
  std::filesystem::path shared() const { return root_ / "shared"; }  // node-wide scratch
  // $AZ_BATCHAI_JOB_TEMP, and inside it $AZ_BATCHAI_JOB_MOUNT_ROOT and the job's shared folder
  // (the master node's is $AZ_BATCHAI_SHARED_JOB_TEMP of every node).
  std::filesystem::path job(const std::string& job_name) const { return jobs() / job_name; }
  std::filesystem::path job_mounts(const std::string& job_name) const { return job(job_name) / "mounts"; }
  std::filesystem::path job_shared(const std::string& job_name) const { return job(job_name) / "shared"; }

 private:
  std::filesystem::path root_;
};

}  // namespace batchai::runtime
