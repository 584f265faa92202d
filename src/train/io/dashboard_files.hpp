// What the trainer leaves in the job's stdout/stderr folder ($AZ_BATCHAI_STDOUTERR_DIR) for the
// dashboard of `batchai serve`: a copy of metrics.json and batchai-manifest.json, which names the
// saved model by its path under the mount root the job sees (so the server can link it without
// knowing --dir) and carries the per-rank step-phase summary. Best effort: a write that fails warns
// once on stderr and never fails the training.
#pragma once
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "step_phases.hpp"

namespace batchai::train {

inline constexpr const char* kManifestFile = "batchai-manifest.json";

// $AZ_BATCHAI_JOB_MOUNT_ROOT and $AZ_BATCHAI_MOUNT_ROOT; empty = not set.
struct MountRoots {
  std::string job;
  std::string cluster;
  static MountRoots from_env();
};

// Where a file lies for the manifest: "job" or "cluster" and the path relative to that root, or
// neither when it is outside both (or a root is unset).
struct MountPlace {
  std::optional<std::string> root;
  std::optional<std::string> path;
};
MountPlace mount_place(const std::string& file, const MountRoots& roots);

struct ManifestFile {
  std::string name;
  std::string kind;  // "model"
  MountPlace place;
  std::uintmax_t bytes = 0;
};

// {"version":1,"mountRoot":...,"files":[...],"timelineSummary":{"ranks":[...]}|null}. mountRoot is
// the first file's root (the trainer lists one file, the model).
std::string manifest_json(const std::vector<ManifestFile>& files, const std::vector<RankPhaseMeans>* ranks);

class DashboardFiles {
 public:
  // Disabled (every call a no-op) when $AZ_BATCHAI_STDOUTERR_DIR is unset or empty.
  static DashboardFiles from_env(std::ostream& warn);
  DashboardFiles(std::string dir, MountRoots roots, std::ostream& warn);

  bool enabled() const { return !dir_.empty(); }
  // metrics.json: the same text MetricsLog writes to --dir.
  void write_metrics(const std::string& metrics_json);
  // The manifest; `model` empty = not saved yet.
  void write_manifest(const std::string& model, const std::vector<RankPhaseMeans>* ranks);

 private:
  void write(const std::string& name, const std::string& text);
  std::string dir_;
  MountRoots roots_;
  std::ostream* warn_;
  bool warned_ = false;
};

}  // namespace batchai::train
