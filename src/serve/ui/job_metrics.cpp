// Per-epoch metrics out of what a job wrote (job_metrics.hpp).
#include "ui/job_metrics.hpp"

#include <cmath>
#include <cstdlib>

#include "ui/bounded_json.hpp"

namespace batchai::serve {
namespace {

std::optional<double> number_after(std::string_view line, std::string_view key) {
  // "key: 1.23" where key is preceded by the start, a space or '-'.
  std::size_t pos = 0;
  while ((pos = line.find(key, pos)) != std::string_view::npos) {
    const bool starts = pos == 0 || line[pos - 1] == ' ';
    const std::size_t colon = pos + key.size();
    if (starts && colon + 1 < line.size() && line[colon] == ':' && line[colon + 1] == ' ') {
      const std::string rest(line.substr(colon + 2, 32));
      char* end = nullptr;
      const double v = std::strtod(rest.c_str(), &end);
      if (end != rest.c_str() && std::isfinite(v)) return v;
    }
    pos = colon;
  }
  return std::nullopt;
}

}  // namespace

const char* const kMetricNames[kMetricCount] = {"loss", "acc", "val_loss", "val_acc", "lr", "seconds", "images_per_sec"};

std::optional<std::vector<Epoch>> parse_metrics_json(const std::string& text) {
  const Json doc = parse_bounded_json(text, kMetricsBudget).value_or(Json());
  if (!doc.is_object() || !doc.contains("epochs") || !doc["epochs"].is_array()) return std::nullopt;
  std::vector<Epoch> out;
  for (const auto& e : doc["epochs"]) {
    if (!e.is_object() || !e.contains("epoch") || !e["epoch"].is_number_integer()) continue;
    Epoch row;
    row.epoch = e["epoch"].get<std::int64_t>();
    for (std::size_t i = 0; i < kMetricCount; ++i) {
      auto it = e.find(kMetricNames[i]);
      if (it != e.end() && it->is_number() && std::isfinite(it->get<double>())) row.v[i] = it->get<double>();
    }
    out.push_back(row);
    if (out.size() > 100000) break;  // bounded whatever the file holds
  }
  return out;
}

std::vector<Epoch> parse_keras(std::string_view text) {
  std::vector<Epoch> out;
  std::optional<std::int64_t> current;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find_first_of("\r\n", start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (line.rfind("Epoch ", 0) == 0) {
      const std::string digits(line.substr(6, line.find('/') == std::string_view::npos ? 0 : line.find('/') - 6));
      if (!digits.empty() && digits.size() < 10 && digits.find_first_not_of("0123456789") == std::string::npos)
        current = std::stoll(digits);
      continue;
    }
    if (!current || line.find("loss: ") == std::string_view::npos) continue;
    Epoch e;
    e.epoch = *current;
    e.v[0] = number_after(line, "loss");
    e.v[1] = number_after(line, "acc");
    if (!e.v[1]) e.v[1] = number_after(line, "accuracy");
    e.v[2] = number_after(line, "val_loss");
    e.v[3] = number_after(line, "val_acc");
    if (!e.v[3]) e.v[3] = number_after(line, "val_accuracy");
    e.v[4] = number_after(line, "lr");
    if (!out.empty() && out.back().epoch == e.epoch) {
      out.back() = e;  // a later progress line of the same epoch
    } else if (out.size() < 100000) {
      out.push_back(e);
    }
  }
  return out;
}

Json epoch_json(const Epoch& e, bool all) {
  Json j = {{"epoch", e.epoch}};
  for (std::size_t i = 0; i < kMetricCount; ++i) {
    if (!all && (i == 4 || i == 5 || i == 6)) continue;
    j[kMetricNames[i]] = e.v[i] ? Json(*e.v[i]) : Json(nullptr);
  }
  return j;
}

}  // namespace batchai::serve
