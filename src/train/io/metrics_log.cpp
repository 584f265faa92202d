// MetricsLog: CSV and JSON of the per-epoch rows, rewritten atomically after every epoch.
#include "io/metrics_log.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "batchai/common/errors.hpp"

namespace batchai::train {
namespace fs = std::filesystem;

namespace {

constexpr const char* kColumns[] = {"epoch", "loss",    "acc",     "val_loss",
                                    "val_acc", "lr", "seconds", "images_per_sec"};

// The seven double columns of a row, in kColumns order after "epoch".
std::vector<double*> fields(EpochMetrics& m) {
  return {&m.loss, &m.acc, &m.val_loss, &m.val_acc, &m.lr, &m.seconds, &m.images_per_sec};
}

void write_atomic(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) throw SystemError("cannot write metrics file '" + tmp + "'");
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) throw SystemError("cannot move metrics file into place at '" + path + "': " + ec.message());
}

}  // namespace

MetricsLog::MetricsLog(std::string dir, std::string stem, bool resume)
    : dir_(std::move(dir)), stem_(std::move(stem)) {
  if (resume && fs::exists(json_path())) {
    std::ifstream in(json_path());
    std::stringstream text;
    text << in.rdbuf();
    rows_ = from_json(text.str());
  }
}

std::string MetricsLog::csv_path() const { return (fs::path(dir_) / (stem_ + ".csv")).string(); }
std::string MetricsLog::json_path() const { return (fs::path(dir_) / (stem_ + ".json")).string(); }
std::string MetricsLog::svg_path() const { return (fs::path(dir_) / (stem_ + ".svg")).string(); }

void MetricsLog::append(const EpochMetrics& row) {
  rows_.push_back(row);
  write_all();
}

void MetricsLog::write_all() const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw SystemError("cannot create metrics folder '" + dir_ + "': " + ec.message());
  write_atomic(csv_path(), to_csv(rows_));
  write_atomic(json_path(), to_json(rows_));
  write_atomic(svg_path(), to_svg(rows_));
}

std::string MetricsLog::to_csv(const std::vector<EpochMetrics>& rows) {
  std::ostringstream out;
  out.precision(9);
  for (std::size_t i = 0; i < std::size(kColumns); ++i) out << (i ? "," : "") << kColumns[i];
  out << "\n";
  for (EpochMetrics r : rows) {
    out << r.epoch;
    for (double* v : fields(r)) {
      out << ",";
      if (!std::isnan(*v)) out << *v;
    }
    out << "\n";
  }
  return out.str();
}

std::string MetricsLog::to_json(const std::vector<EpochMetrics>& rows) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (EpochMetrics r : rows) {
    nlohmann::ordered_json j = {{"epoch", r.epoch}};
    const auto values = fields(r);
    for (std::size_t i = 0; i < values.size(); ++i) {
      const double v = *values[i];
      j[kColumns[i + 1]] = std::isnan(v) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(v);
    }
    list.push_back(std::move(j));
  }
  return nlohmann::ordered_json{{"epochs", list}}.dump(2) + "\n";
}

std::vector<EpochMetrics> MetricsLog::from_json(const std::string& text) {
  std::vector<EpochMetrics> rows;
  try {
    const auto doc = nlohmann::json::parse(text);
    for (const auto& j : doc.at("epochs")) {
      EpochMetrics r;
      r.epoch = j.at("epoch").get<int>();
      const auto values = fields(r);
      for (std::size_t i = 0; i < values.size(); ++i) {
        const auto it = j.find(kColumns[i + 1]);
        if (it != j.end() && it->is_number()) *values[i] = it->get<double>();
      }
      rows.push_back(r);
    }
  } catch (const nlohmann::json::exception& e) {
    throw InvalidArgument(std::string("metrics JSON cannot be read (") + e.what() +
                          "); delete it or start without --resume");
  }
  return rows;
}

}  // namespace batchai::train
