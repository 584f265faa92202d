// One forward/backward and two RMSprop updates of the full tutorial network compared against
// tests/reference/reference_step.json, computed independently in float64 by
// tests/reference/reference_step.py (NumPy). No Python is needed to run this test.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "optimizer.hpp"

namespace batchai::train {
namespace {

double hash_unit(std::uint64_t idx) {
  return static_cast<double>((idx * 2654435761ULL) % (1ULL << 32)) / 4294967296.0;
}

nlohmann::json load_reference() {
  const char* env = std::getenv("BATCHAI_REFERENCE_DIR");
  const std::string dir = env != nullptr ? env : BATCHAI_SOURCE_DIR "/tests/reference";
  std::ifstream in(dir + "/reference_step.json");
  if (!in) throw std::runtime_error("cannot open " + dir + "/reference_step.json");
  return nlohmann::json::parse(in);
}

TEST(ReferenceStep, MatchesNumpyForwardBackwardAndRmsProp) {
  const nlohmann::json ref = load_reference();
  const int n = ref["batch"];
  auto be = make_backend(BackendKind::kCpu, 2);
  Model model(*be, tutorial_network(), n);

  // Parameters and inputs from the same integer formula as the script.
  std::vector<float> p(model.param_count());
  for (const auto& e : model.table()) {
    for (std::size_t i = 0; i < e.size(); ++i) {
      const std::size_t j = e.offset + i;
      if (e.weight == "kernel:0") {
        const double rf = e.shape.size() == 4 ? 9.0 : 1.0;
        const double limit = std::sqrt(6.0 / (rf * e.shape[e.shape.size() - 2] + rf * e.shape.back()));
        p[j] = static_cast<float>((hash_unit(j) * 2 - 1) * limit);
      } else {
        p[j] = static_cast<float>(0.01 * (static_cast<double>(j % 7) - 3));
      }
    }
  }
  model.set_params(p);
  std::vector<float> x(static_cast<std::size_t>(n) * 32 * 32 * 3);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(hash_unit(i));
  std::vector<float> labels;
  for (int l : ref["labels"]) labels.push_back(static_cast<float>(l));

  RmsProp opt(model, RmsPropConfig{ref["lr"], ref["rho"], ref["epsilon"], ref["decay"]});
  for (const auto& step : ref["steps"]) {
    const BatchStats s = model.train_batch(x.data(), labels.data(), n, false, 0, 0);
    EXPECT_NEAR(s.loss_sum / n, step["loss"].get<double>(), 2e-5);
    const auto logits = model.logits(n);
    for (int j = 0; j < 10; ++j) EXPECT_NEAR(logits[j], step["logits_row0"][j].get<double>(), 2e-5);
    const auto g = model.get_grads();
    for (const auto& e : model.table()) {
      const auto& rg = step["grads"][e.layer + "/" + e.weight];
      double norm = 0.0;
      for (std::size_t i = 0; i < e.size(); ++i) norm += double(g[e.offset + i]) * g[e.offset + i];
      EXPECT_NEAR(std::sqrt(norm), rg["norm"].get<double>(), 1e-4 * rg["norm"].get<double>() + 1e-7)
          << e.layer << "/" << e.weight;
      for (std::size_t k = 0; k < rg["index"].size(); ++k) {
        const double want = rg["value"][k];
        EXPECT_NEAR(g[e.offset + rg["index"][k].get<std::size_t>()], want, 1e-4 * std::abs(want) + 1e-7)
            << e.layer << "/" << e.weight << " [" << rg["index"][k] << "]";
      }
    }
    opt.step();
    const auto after = model.get_params();
    for (const auto& e : model.table()) {
      const auto& rp = step["params_after"][e.layer + "/" + e.weight];
      for (std::size_t k = 0; k < rp["index"].size(); ++k) {
        EXPECT_NEAR(after[e.offset + rp["index"][k].get<std::size_t>()], rp["value"][k].get<double>(), 2e-6)
            << e.layer << "/" << e.weight;
      }
    }
  }
  EXPECT_EQ(opt.iterations(), 2u);
  EXPECT_NEAR(opt.lr_at(1), 1e-3 / (1 + 1e-6), 1e-15);
}

}  // namespace
}  // namespace batchai::train
