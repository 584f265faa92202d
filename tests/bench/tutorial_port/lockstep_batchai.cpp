// batchai's half of the lockstep check (lockstep.py is the port's half): the tutorial's network,
// loss, RMSprop and Horovod averaging as `batchai train` runs them, but on inputs both trainers can
// share exactly: Glorot weights from --seed written out for the port to load, no augmentation, no
// dropout, and fixed batches (step s, rank r trains images (s * ranks + r) * batch ..., wrapping
// round the training set). Every step sums the ranks' gradients and scales by 1 / ranks, as the
// trainer's allreduce does, in one process (the allreduce itself has its own tests).
//
// Usage: tutorial_lockstep --data-dir DIR --out DIR [--ranks 4] [--batch 32] [--steps 200] [--seed 1]
//                          [--threads 2]
// Writes OUT/table.json (each weight's Keras layer, name, shape and arena offset), OUT/initial.f32
// and OUT/step-1.f32 (the arena before and after the first update, Keras layout, float32 in this
// machine's byte order) and OUT/steps.csv (step, mean loss over the ranks' batches, accuracy).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "augment.hpp"
#include "optimizer.hpp"
#include "train_data.hpp"

namespace bt = batchai::train;
namespace fs = std::filesystem;

namespace {

void write_floats(const fs::path& path, const std::vector<float>& v) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

void write_table(const fs::path& path, const bt::ParamTable& table) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& e : table) {
    rows.push_back({{"layer", e.layer}, {"weight", e.weight}, {"shape", e.shape}, {"offset", e.offset}});
  }
  std::ofstream(path) << rows.dump(1) << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"batchai's half of the lockstep check against the PyTorch port"};
  std::string data_dir, out_dir;
  int ranks = 4, batch = 32, steps = 200, threads = 2;
  unsigned seed = 1;
  app.add_option("--data-dir", data_dir, "CIFAR-10 binary files (plain)")->required();
  app.add_option("--out", out_dir, "Output folder")->required();
  app.add_option("--ranks", ranks, "Simulated Horovod ranks")->check(CLI::Range(1, 64));
  app.add_option("--batch", batch, "Images per rank per step")->check(CLI::Range(1, 4096));
  app.add_option("--steps", steps, "Optimizer updates")->check(CLI::Range(1, 1000000));
  app.add_option("--seed", seed, "Seed of the Glorot initial weights");
  app.add_option("--threads", threads, "CPU threads")->check(CLI::Range(1, 256));
  CLI11_PARSE(app, argc, argv);

  bt::TrainOptions o;
  o.data_dir = data_dir;
  const bt::TrainData data = bt::load_train_data(o);
  auto backend = bt::make_backend(bt::BackendKind::kCpu, threads);
  bt::Model model(*backend, bt::tutorial_network(), batch);
  bt::RmsPropConfig config;
  config.lr = bt::default_lr(ranks);  // Horovod's 1e-4 * size; rho, epsilon, decay: Keras' defaults
  bt::RmsProp opt(model, config);
  model.init_glorot(seed);

  const fs::path out(out_dir);
  fs::create_directories(out);
  write_table(out / "table.json", model.table());
  write_floats(out / "initial.f32", model.get_params());

  const std::size_t n = model.param_count();
  std::vector<float> x(static_cast<std::size_t>(batch) * bt::kCifarImageBytes), y(static_cast<std::size_t>(batch));
  std::vector<int> idx(static_cast<std::size_t>(batch));
  std::vector<float> sum(n);
  bt::AugmentConfig plain;
  plain.enabled = false;
  std::ofstream csv(out / "steps.csv");
  csv << "step,loss,acc\n";
  for (int s = 0; s < steps; ++s) {
    std::fill(sum.begin(), sum.end(), 0.0f);
    double loss = 0.0, correct = 0.0;
    for (int r = 0; r < ranks; ++r) {
      const long long first = (static_cast<long long>(s) * ranks + r) * batch;
      for (int k = 0; k < batch; ++k) idx[k] = static_cast<int>((first + k) % data.train.count);
      bt::prepare_batch(data.train, idx.data(), batch, plain, 0, 0, x.data(), y.data());
      const bt::BatchStats st = model.train_batch(x.data(), y.data(), batch, false, 0, 0);
      loss += st.loss_sum / batch, correct += st.correct;
      const std::vector<float> g = model.get_grads();
      for (std::size_t i = 0; i < n; ++i) sum[i] += g[i];  // rank order, as the ring adds them
    }
    backend->upload(model.grads(), sum.data(), n);
    backend->scale(model.grads(), 1.0f / static_cast<float>(ranks));
    opt.step();
    char line[96];
    std::snprintf(line, sizeof line, "%d,%.9g,%.6f\n", s + 1, loss / ranks, correct / (static_cast<double>(ranks) * batch));
    csv << line;
    if (s == 0) write_floats(out / "step-1.f32", model.get_params());
  }
  std::cout << "lockstep: " << steps << " steps of " << ranks << " x " << batch << " images written to " << out_dir
            << "\n";
  return 0;
}
