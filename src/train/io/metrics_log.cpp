// MetricsLog: CSV and JSON of the per-epoch rows, rewritten atomically after every epoch, and their
// SVG plot: two panels side by side, loss and accuracy against epoch, with train (solid) and
// validation (dashed) curves, axes, a few ticks and a legend.
#include "io/metrics_log.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

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

// The SVG plot.
namespace {

constexpr double kPanelW = 420, kPanelH = 300, kLeft = 60, kTop = 40, kPlotW = 330, kPlotH = 210;

std::string num(double v, int digits = 3) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.*g", digits, v);
  return buf;
}

using Getter = std::function<double(const EpochMetrics&)>;

struct Series {
  const char* label;
  const char* colour;
  bool dashed;
  Getter get;
};

std::string panel(const std::vector<EpochMetrics>& rows, double x0, const char* title,
                  const std::vector<Series>& series) {
  double lo = 1e300, hi = -1e300;
  for (const auto& r : rows) {
    for (const auto& s : series) {
      const double v = s.get(r);
      if (std::isfinite(v)) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
    }
  }
  if (lo > hi) {  // no finite values yet
    lo = 0;
    hi = 1;
  }
  if (hi - lo < 1e-9) {  // flat curve: give it some room
    lo -= 0.5;
    hi += 0.5;
  }
  const int first = rows.empty() ? 1 : rows.front().epoch;
  const int last = rows.empty() ? 1 : std::max(rows.back().epoch, first + 1);
  auto px = [&](double epoch) { return x0 + kLeft + (epoch - first) / (last - first) * kPlotW; };
  auto py = [&](double v) { return kTop + kPlotH - (v - lo) / (hi - lo) * kPlotH; };

  std::string out = "<g font-family=\"sans-serif\" font-size=\"11\">\n";
  out += "<text x=\"" + num(x0 + kLeft + kPlotW / 2, 6) + "\" y=\"22\" text-anchor=\"middle\" "
         "font-size=\"14\">" + title + "</text>\n";
  out += "<rect x=\"" + num(x0 + kLeft, 6) + "\" y=\"" + num(kTop, 6) + "\" width=\"" +
         num(kPlotW, 6) + "\" height=\"" + num(kPlotH, 6) + "\" fill=\"none\" stroke=\"#444\"/>\n";
  for (int i = 0; i <= 4; ++i) {  // y ticks
    const double v = lo + (hi - lo) * i / 4;
    out += "<text x=\"" + num(x0 + kLeft - 5, 6) + "\" y=\"" + num(py(v) + 4, 6) +
           "\" text-anchor=\"end\">" + num(v) + "</text>\n";
  }
  const int step = std::max(1, (last - first) / 5);
  for (int e = first; e <= last; e += step) {  // x ticks
    out += "<text x=\"" + num(px(e), 6) + "\" y=\"" + num(kTop + kPlotH + 15, 6) +
           "\" text-anchor=\"middle\">" + std::to_string(e) + "</text>\n";
  }
  out += "<text x=\"" + num(x0 + kLeft + kPlotW / 2, 6) + "\" y=\"" + num(kTop + kPlotH + 32, 6) +
         "\" text-anchor=\"middle\">epoch</text>\n";
  for (std::size_t k = 0; k < series.size(); ++k) {
    const Series& s = series[k];
    std::string points;
    for (const auto& r : rows) {
      const double v = s.get(r);
      if (std::isfinite(v)) points += num(px(r.epoch), 6) + "," + num(py(v), 6) + " ";
    }
    if (!points.empty()) {
      out += "<polyline fill=\"none\" stroke=\"" + std::string(s.colour) +
             "\" stroke-width=\"2\"" + (s.dashed ? " stroke-dasharray=\"6,4\"" : "") +
             " points=\"" + points + "\"/>\n";
    }
    const double ly = kTop + 12 + 14.0 * static_cast<double>(k);
    out += "<line x1=\"" + num(x0 + kLeft + 8, 6) + "\" y1=\"" + num(ly, 6) + "\" x2=\"" +
           num(x0 + kLeft + 28, 6) + "\" y2=\"" + num(ly, 6) + "\" stroke=\"" + s.colour +
           "\" stroke-width=\"2\"" + (s.dashed ? " stroke-dasharray=\"6,4\"" : "") + "/>\n";
    out += "<text x=\"" + num(x0 + kLeft + 32, 6) + "\" y=\"" + num(ly + 4, 6) + "\">" +
           s.label + "</text>\n";
  }
  return out + "</g>\n";
}

}  // namespace

std::string MetricsLog::to_svg(const std::vector<EpochMetrics>& rows) {
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(2 * kPanelW, 6) +
                    "\" height=\"" + num(kPanelH, 6) + "\" viewBox=\"0 0 " + num(2 * kPanelW, 6) +
                    " " + num(kPanelH, 6) + "\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out += panel(rows, 0, "loss",
               {{"loss", "#1f77b4", false, [](const EpochMetrics& r) { return r.loss; }},
                {"val_loss", "#ff7f0e", true, [](const EpochMetrics& r) { return r.val_loss; }}});
  out += panel(rows, kPanelW, "accuracy",
               {{"acc", "#1f77b4", false, [](const EpochMetrics& r) { return r.acc; }},
                {"val_acc", "#ff7f0e", true, [](const EpochMetrics& r) { return r.val_acc; }}});
  return out + "</svg>\n";
}

}  // namespace batchai::train
