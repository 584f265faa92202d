// The dashboard endpoints that read what a job wrote (docs/dashboard.md "Dashboard"): its log files a
// bounded piece at a time, its per-epoch metrics (the trainer's metrics.json, else Keras-style
// lines of stdout.txt), an experiment's curves side by side, and the files its manifest names.
// Every file is opened through the control plane's confined folders (Jobs::output_folder, as
// `job file stream` reads), never by a path from the request.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "batchai/common/errors.hpp"
#include "batchai/common/utf8.hpp"
#include "batchai/control_plane/control_plane.hpp"
#include "batchai/control_plane/dashboard_reads.hpp"
#include "job_files/job_file_links.hpp"
#include "ui/bounded_json.hpp"
#include "ui/job_metrics.hpp"
#include "ui/ui_api.hpp"
#include "ui/ui_api_util.hpp"
#include "ui/ui_routes.hpp"

namespace batchai::serve {
namespace {

namespace cp = control_plane;

constexpr std::uint64_t kMaxLogBytes = 64 * 1024;          // raw bytes per log answer
constexpr std::size_t kMaxLogText = 60 * 1024;             // their JSON text, quotes and escapes included
// What a job's manifest may cost a read: its bytes, and ~100 bytes of document per value.
constexpr JsonBudget kManifestBudget{256 * 1024, 16, 10000};
constexpr std::uint64_t kStdoutTail = 2 * 1024 * 1024;     // Keras lines are read from here
constexpr std::uint64_t kExperimentStdoutTail = 256 * 1024;
constexpr std::size_t kMaxManifestFiles = 50;
constexpr std::uint64_t kMaxModelBytes = std::uint64_t{64} << 30;
constexpr std::size_t kMaxEpochs = 1000;
constexpr std::size_t kMaxExperimentJobs = 50;
constexpr std::size_t kBudget = kUiMaxAnswerBytes - 4096;
// The experiment endpoint reads up to 50 jobs' files: it stops (truncated) rather than hold its
// worker past this.
constexpr std::chrono::milliseconds kExperimentDeadline{700};

std::optional<ConfinedDir> stdouterr(cp::ControlPlane& plane, const cp::JobRef& ref) {
  return plane.jobs().output_folder(ref, "stdouterr", ".");
}

struct OpenFile {
  UniqueFd fd;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
};

std::optional<OpenFile> open_in(const std::optional<ConfinedDir>& dir, const std::string& name) {
  if (!dir) return std::nullopt;
  auto fd = dir->open_file(name, "The file name");
  struct stat st {};
  if (!fd || ::fstat(fd->get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return OpenFile{std::move(*fd), static_cast<std::uint64_t>(st.st_size),
                  static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

std::string read_at(const UniqueFd& fd, std::uint64_t offset, std::uint64_t length) {
  std::string out(length, '\0');
  std::size_t got = 0;
  while (got < length) {
    const ssize_t n = ::pread(fd.get(), out.data() + got, length - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  out.resize(got);
  return out;
}

// The most bytes a byte may take in a JSON string (nlohmann, invalid UTF-8 replaced).
std::size_t json_cost(unsigned char b) {
  if (b == '\b' || b == '\f' || b == '\n' || b == '\r' || b == '\t' || b == '"' || b == '\\') return 2;
  if (b < 0x20) return 6;  // \u00XX
  if (b >= 0x80) return 3;  // U+FFFD at worst
  return 1;
}

Json log(const HttpRequest& req, UiContext& ui) {
  const cp::JobRef ref = ui_job(req);
  if (!req.has_param("file")) throw AnswerError(400, "MissingParameter", "The query parameter 'file' is required.");
  const std::string file = req.get_param_value("file");
  if (file.empty() || file.size() > 255 || file == "." || file == ".." || file.find('/') != std::string::npos ||
      file.find('\0') != std::string::npos || !is_valid_utf8(file))
    throw AnswerError(400, "InvalidParameter", "file must be the name of a file in the job's stdouterr folder.");
  const auto offset = ui_count(req, "offset", INT64_MAX);
  const auto before = ui_count(req, "before", INT64_MAX);
  const bool tail = req.get_param_value("tail") == "1";
  if (int(offset.has_value()) + int(before.has_value()) + int(tail) > 1)
    throw AnswerError(400, "InvalidParameter", "Give at most one of offset, tail=1 and before.");
  auto lease = ui.pool.borrow();
  auto dir = stdouterr(*lease, ref);
  if (!dir) return {{"file", file}, {"size", 0}, {"offset", 0}, {"nextOffset", 0}, {"text", ""}, {"eof", true}};
  auto f = open_in(dir, file);
  if (!f) throw AnswerError(404, "FileNotFound", "The job has no file '" + printable(file) + "' in stdouterr (yet).");
  const std::uint64_t size = f->size;
  std::uint64_t start = 0, end = 0;
  if (tail || before) {
    end = before ? std::min(static_cast<std::uint64_t>(*before), size) : size;
    start = end - std::min(end, kMaxLogBytes);
    std::string bytes = read_at(f->fd, start, end - start);
    // Keep the newest bytes that fit: cut from the front.
    std::size_t cost = 2, keep = 0;
    for (std::size_t i = bytes.size(); i > 0; --i) {
      cost += json_cost(static_cast<unsigned char>(bytes[i - 1]));
      if (cost > kMaxLogText) break;
      ++keep;
    }
    start = start + (bytes.size() - keep);
    end = start + keep;
    bytes.erase(0, bytes.size() - keep);
    return {{"file", file}, {"size", size}, {"offset", start}, {"nextOffset", end}, {"text", std::move(bytes)},
            {"eof", end >= size}};
  }
  start = std::min(static_cast<std::uint64_t>(offset.value_or(0)), size);
  std::string bytes = read_at(f->fd, start, std::min(kMaxLogBytes, size - start));
  std::size_t cost = 2, keep = 0;
  for (unsigned char b : bytes) {
    cost += json_cost(b);
    if (cost > kMaxLogText) break;
    ++keep;
  }
  bytes.resize(keep);
  end = start + keep;
  return {{"file", file}, {"size", size}, {"offset", start}, {"nextOffset", end}, {"text", std::move(bytes)},
          {"eof", end >= size}};
}

struct Metrics {
  std::vector<Epoch> epochs;
  Json source = nullptr;
  std::string version;
};

Metrics read_metrics(const std::optional<ConfinedDir>& dir, std::uint64_t stdout_tail) {
  Metrics m;
  m.version = "none";
  if (auto f = open_in(dir, "metrics.json")) {
    m.version = "m" + std::to_string(f->size) + "-" + std::to_string(f->mtime_ns);
    if (f->size <= kMetricsBudget.max_bytes) {
      if (auto rows = parse_metrics_json(read_at(f->fd, 0, f->size))) {
        m.epochs = std::move(*rows);
        m.source = "metrics.json";
        return m;
      }
    }
  }
  if (auto f = open_in(dir, "stdout.txt")) {
    m.version += "/s" + std::to_string(f->size) + "-" + std::to_string(f->mtime_ns);
    const std::uint64_t from = f->size - std::min(f->size, stdout_tail);
    m.epochs = parse_keras(read_at(f->fd, from, f->size - from));
    if (!m.epochs.empty()) m.source = "stdout";
  }
  return m;
}

std::optional<Json> read_manifest(const std::optional<ConfinedDir>& dir) {
  auto f = open_in(dir, "batchai-manifest.json");
  if (!f || f->size > kManifestBudget.max_bytes) return std::nullopt;
  Json doc = parse_bounded_json(read_at(f->fd, 0, f->size), kManifestBudget).value_or(Json());
  if (!doc.is_object() || doc.value("version", Json()) != 1) return std::nullopt;
  return doc;
}

// The manifest's timelineSummary as the page reads it: {"ranks": [{rank, steps, meanMs: {phase:
// number}}]} with numbers only; null when it has another shape or passes 16 KB.
Json clean_timeline(const Json& t) {
  const Json ranks = member_or_null(t, "ranks");
  if (!ranks.is_array() || ranks.size() > 512) return nullptr;
  Json rows = Json::array();
  for (const auto& r : ranks) {
    const Json rank = member_or_null(r, "rank"), steps = member_or_null(r, "steps"), mean = member_or_null(r, "meanMs");
    if (!rank.is_number() || !steps.is_number() || !(mean.is_object() || mean.is_null())) return nullptr;
    Json phases = Json::object();
    if (mean.is_object())
      for (const auto& [phase, ms] : mean.items()) {
        if (!ms.is_number() || phase.size() > 64) return nullptr;
        phases[phase] = ms;
      }
    rows.push_back({{"rank", rank}, {"steps", steps}, {"meanMs", phases}});
  }
  Json out = {{"ranks", rows}};
  return json_size(out) <= 16 * 1024 ? out : Json(nullptr);
}

Json metrics(const HttpRequest& req, UiContext& ui) {
  const cp::JobRef ref = ui_job(req);
  auto lease = ui.pool.borrow();
  const auto dir = stdouterr(*lease, ref);
  Metrics m = read_metrics(dir, kStdoutTail);
  Json timeline = nullptr, timeline_error = nullptr;
  if (auto manifest = read_manifest(dir)) {
    const Json t = manifest->value("timelineSummary", Json());
    if (!t.is_null()) {
      timeline = clean_timeline(t);
      if (timeline.is_null()) timeline_error = "The manifest's timelineSummary is malformed (docs/serve.md).";
    }
  }
  std::size_t n = kMaxEpochs;
  Json out;
  for (;;) {
    Json epochs = Json::array();
    for (const auto& e : downsample(m.epochs, n)) epochs.push_back(epoch_json(e, true));
    out = {{"epochs", epochs}, {"source", m.source}, {"timeline", timeline}, {"timelineError", timeline_error},
           {"version", m.version}};
    if (json_size(out) <= kBudget || n <= 2) break;
    n = n * 3 / 4;
  }
  return out;
}

std::optional<double> test_accuracy(const std::optional<ConfinedDir>& dir) {
  auto f = open_in(dir, "stdout.txt");
  if (!f) return std::nullopt;
  const std::uint64_t from = f->size - std::min(f->size, kExperimentStdoutTail);
  const std::string text = read_at(f->fd, from, f->size - from);
  const auto pos = text.rfind("Test accuracy:");
  if (pos == std::string::npos) return std::nullopt;
  const std::string rest = text.substr(pos + 14, 32);
  char* end = nullptr;
  const double v = std::strtod(rest.c_str(), &end);
  if (end == rest.c_str() || !std::isfinite(v)) return std::nullopt;
  return v;
}

Json experiment(const HttpRequest& req, UiContext& ui) {
  const cp::WorkspaceRef where = ui_workspace(req);
  const std::string name = ui_name(req, "experiment", "experiment_name");
  const auto deadline = std::chrono::steady_clock::now() + kExperimentDeadline;
  auto lease = ui.pool.borrow();
  cp::ControlPlane& plane = *lease;
  cp::DashboardReads reads(plane);
  const auto newest = reads.newest_jobs(where, name, kMaxExperimentJobs + 1);
  bool truncated = newest.size() > kMaxExperimentJobs;
  struct Row {
    std::string name, state;
    std::vector<Epoch> epochs;
    std::optional<double> test;
  };
  std::vector<Row> rows;
  for (std::size_t i = 0; i < newest.size() && i < kMaxExperimentJobs; ++i) {
    Row r{newest[i].first, newest[i].second, {}, std::nullopt};
    if (std::chrono::steady_clock::now() < deadline) {
      try {
        const auto dir = stdouterr(plane, {where, name, r.name});
        r.epochs = read_metrics(dir, kExperimentStdoutTail).epochs;
        r.test = test_accuracy(dir);
      } catch (const Error&) {
      }
    } else {
      truncated = true;  // the rest are listed without their curves
    }
    rows.push_back(std::move(r));
  }
  auto build = [&](std::size_t points, std::size_t jobs) {
    Json list = Json::array();
    for (std::size_t i = 0; i < rows.size() && i < jobs; ++i) {
      const Row& r = rows[i];
      std::optional<double> best, final_acc;
      std::optional<std::int64_t> best_epoch;
      for (const auto& e : r.epochs) {
        if (!e.v[3]) continue;
        final_acc = e.v[3];
        if (!best || *e.v[3] > *best) {
          best = e.v[3];
          best_epoch = e.epoch;
        }
      }
      Json epochs = Json::array();
      for (const auto& e : downsample(r.epochs, points)) {
        Json j = epoch_json(e, false);
        epochs.push_back({{"epoch", j["epoch"]}, {"val_acc", j["val_acc"]}, {"acc", j["acc"]}, {"loss", j["loss"]},
                          {"val_loss", j["val_loss"]}});
      }
      list.push_back({{"name", r.name},
                      {"state", r.state},
                      {"bestValAcc", best ? Json(*best) : Json(nullptr)},
                      {"bestEpoch", best_epoch ? Json(*best_epoch) : Json(nullptr)},
                      {"finalValAcc", final_acc ? Json(*final_acc) : Json(nullptr)},
                      {"testAccuracy", r.test ? Json(*r.test) : Json(nullptr)},
                      {"epochs", epochs}});
    }
    return list;
  };
  std::size_t points = kMaxEpochs, jobs = rows.size();
  Json list = build(points, jobs);
  while (json_size(list) > kBudget && points > 2) list = build(points = points / 2, jobs);
  while (json_size(list) > kBudget && jobs > 0) {
    list = build(points, --jobs);
    truncated = true;
  }
  return {{"jobs", list},
          {"truncated", truncated},
          {"cli", "batchai job list" + cli_where(where) + " -e " + shell_word(name) + " -o table"}};
}

// A file name safe in a Content-Disposition header and on a page: the manifest's last path part.
std::string plain_file_name(const std::string& path) {
  std::string name = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  return name.empty() ? "file" : name.substr(0, 128);
}

}  // namespace

UiAnswer ui_job_log(const HttpRequest& req, HttpResponse&, UiContext& ui, std::int64_t) { return log(req, ui); }
UiAnswer ui_job_metrics(const HttpRequest& req, HttpResponse&, UiContext& ui, std::int64_t) { return metrics(req, ui); }
UiAnswer ui_experiment(const HttpRequest& req, HttpResponse&, UiContext& ui, std::int64_t) { return experiment(req, ui); }

Json ui_manifest_files(UiContext& ui, cp::ControlPlane& plane, const cp::JobRef& job, std::int64_t now_s) {
  Json out = Json::array();
  try {
    auto manifest = read_manifest(stdouterr(plane, job));
    if (!manifest || !manifest->value("files", Json()).is_array()) return out;
    const std::string default_root = manifest->value("mountRoot", Json("job")) == "cluster" ? "cluster" : "job";
    cp::DashboardReads reads(plane);
    for (const auto& f : (*manifest)["files"]) {
      if (out.size() >= kMaxManifestFiles) break;
      if (!f.is_object() || !f.value("mountPath", Json()).is_string()) continue;
      const std::string path = f["mountPath"].get<std::string>();
      const Json root_field = f.value("mountRoot", Json(default_root));
      const bool job_root = !(root_field.is_string() && root_field.get<std::string>() == "cluster");
      auto opened = reads.open_mount_file(job, job_root, path, kMaxModelBytes);
      if (!opened) continue;  // outside the job's mounts, missing, or too large: no link
      const std::string name = plain_file_name(path);
      Json kind = f.value("kind", Json("model"));
      out.push_back({{"name", name},
                     {"kind", kind.is_string() && kind.get<std::string>().size() <= 32 ? kind : Json("file")},
                     {"bytes", opened->size},
                     {"url", mount_file_url(ui.identity, "", {job, job_root, path, now_s + 3600})}});
    }
  } catch (const Error&) {
    // A job that has not written its folder yet, or a hostile manifest: no links, no error page.
  }
  return out;
}

}  // namespace batchai::serve
