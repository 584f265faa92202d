// DashboardFiles: the dashboard's copies in $AZ_BATCHAI_STDOUTERR_DIR, each written to a temporary
// name and renamed, so the server never reads half a file.
#include "io/dashboard_files.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace batchai::train {
namespace fs = std::filesystem;

namespace {

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// `file` relative to `root` when it lies beneath it. Lexical first: a mount is a link, so the
// resolved file is elsewhere while the path the job used starts with the root. Then resolved, for
// a --dir given through the link's target.
std::optional<std::string> beneath(const fs::path& file, const std::string& root) {
  if (root.empty()) return std::nullopt;
  auto inside = [](const fs::path& f, const fs::path& r) -> std::optional<std::string> {
    const fs::path rel = f.lexically_relative(r);
    if (rel.empty() || rel == "." || *rel.begin() == "..") return std::nullopt;
    return rel.generic_string();
  };
  std::error_code ec;
  const fs::path abs_file = fs::absolute(file, ec).lexically_normal();
  const fs::path abs_root = fs::absolute(root, ec).lexically_normal();
  if (auto rel = inside(abs_file, abs_root)) return rel;
  const fs::path real_file = fs::weakly_canonical(file, ec);
  if (ec) return std::nullopt;
  const fs::path real_root = fs::weakly_canonical(root, ec);
  if (ec) return std::nullopt;
  return inside(real_file, real_root);
}

}  // namespace

MountRoots MountRoots::from_env() {
  return MountRoots{env_or_empty("AZ_BATCHAI_JOB_MOUNT_ROOT"), env_or_empty("AZ_BATCHAI_MOUNT_ROOT")};
}

MountPlace mount_place(const std::string& file, const MountRoots& roots) {
  // The job mount root lies beneath the node's folders, never the other way round; try it first.
  if (auto rel = beneath(file, roots.job)) return {"job", rel};
  if (auto rel = beneath(file, roots.cluster)) return {"cluster", rel};
  return {};
}

std::string manifest_json(const std::vector<ManifestFile>& files, const std::vector<RankPhaseMeans>* ranks) {
  nlohmann::ordered_json doc;
  doc["version"] = 1;
  doc["mountRoot"] = nullptr;
  for (const auto& f : files) {
    if (f.place.root) {
      doc["mountRoot"] = *f.place.root;
      break;
    }
  }
  auto list = nlohmann::ordered_json::array();
  for (const auto& f : files) {
    list.push_back({{"name", f.name},
                    {"kind", f.kind},
                    {"mountPath", f.place.path ? nlohmann::ordered_json(*f.place.path) : nlohmann::ordered_json()},
                    {"bytes", f.bytes}});
  }
  doc["files"] = std::move(list);
  if (ranks == nullptr) {
    doc["timelineSummary"] = nullptr;
  } else {
    auto rows = nlohmann::ordered_json::array();
    for (const auto& r : *ranks) {
      nlohmann::ordered_json mean;
      for (std::size_t p = 0; p < kPhaseCount; ++p) mean[kPhaseNames[p]] = r.mean_ms[p];
      rows.push_back({{"rank", r.rank}, {"steps", r.steps}, {"meanMs", std::move(mean)}});
    }
    doc["timelineSummary"] = {{"ranks", std::move(rows)}};
  }
  // Paths are bytes from the file system: never let invalid UTF-8 throw here.
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

DashboardFiles DashboardFiles::from_env(std::ostream& warn) {
  return DashboardFiles(env_or_empty("AZ_BATCHAI_STDOUTERR_DIR"), MountRoots::from_env(), warn);
}

DashboardFiles::DashboardFiles(std::string dir, MountRoots roots, std::ostream& warn)
    : dir_(std::move(dir)), roots_(std::move(roots)), warn_(&warn) {}

void DashboardFiles::write_metrics(const std::string& metrics_json) {
  if (enabled()) write("metrics.json", metrics_json);
}

void DashboardFiles::write_manifest(const std::string& model, const std::vector<RankPhaseMeans>* ranks) {
  if (!enabled()) return;
  std::vector<ManifestFile> files;
  if (!model.empty()) {
    std::error_code ec;
    const auto bytes = fs::file_size(model, ec);
    files.push_back({fs::path(model).filename().string(), "model", mount_place(model, roots_), ec ? 0 : bytes});
  }
  write(kManifestFile, manifest_json(files, ranks));
}

void DashboardFiles::write(const std::string& name, const std::string& text) {
  const fs::path target = fs::path(dir_) / name;
  // The pid keeps two writers (a resumed run racing an old one) off each other's temporary file.
  const fs::path tmp = fs::path(dir_) / ("." + name + "." + std::to_string(::getpid()) + ".tmp");
  std::error_code ec;
  bool ok = false;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    ok = static_cast<bool>(out.flush());
  }
  if (ok) {
    fs::rename(tmp, target, ec);
    ok = !ec;
  }
  if (ok) return;
  fs::remove(tmp, ec);
  if (!warned_) {
    warned_ = true;
    *warn_ << "batchai train: warning: cannot write " << target.string()
           << " for the dashboard; training goes on without it\n"
           << std::flush;
  }
}

}  // namespace batchai::train
