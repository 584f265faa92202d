// batchai's half of the trainer's reference check (lockstep.py is the other half), run under
// mpirun with one process per rank: the training loop of `batchai train` itself (run_training, with
// the communicator it chooses: shared memory between ranks on one host) with the randomness both
// sides can share taken out: one step per epoch (each epoch's metrics row is one step's loss), no
// augmentation unless --augment, no dropout unless --dropout. The initial weights (Glorot from
// --seed, rank 0's broadcast), every rank's batches and, with --augment, the augmented images, with
// --dropout, which features the trainer keeps are written out for the reference to use.
//
// Usage: mpirun -np RANKS train_reference_lockstep --data-dir DIR --out DIR [--batch 32] [--steps 30]
//                                           [--seed 1] [--threads 1] [--allreduce ring|mpi]
//                                           [--augment] [--dropout]
// Writes to OUT: table.json (each weight's Keras layer, name, shape and arena offset); initial.f32
// and step-1.f32 (the arena before and after the first step, Keras layout, float32 in this
// machine's byte order); order.i32 (int32 image indices [step][rank][image]); with --augment,
// inputs.f32 (the images as the trainer's batch preparation makes them, float32 [step][rank][image]
// [32][32][3] in [0, 1]); with --dropout, dropout.json (each Dropout layer's features per image, in
// the trainer's NHWC order, and rate) and kept.u8 (1 where the trainer keeps a feature: [step][rank]
// [layer][image][feature]); steps.csv (per step: its number, the loss averaged over the ranks'
// batches, accuracy); run/ (the trainer's own output).
#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "augment.hpp"
#include "batchai/train/counter_rng.hpp"
#include "batchai/train/mpi_session.hpp"
#include "batchai/train/train_options.hpp"
#include "comm/communicator_choice.hpp"
#include "model.hpp"
#include "train_data.hpp"
#include "trainer.hpp"

namespace bt = batchai::train;
namespace fs = std::filesystem;

namespace {

template <typename T>
void write_binary(const fs::path& path, const std::vector<T>& v) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

void write_table(const fs::path& path, const bt::ParamTable& table) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& e : table) {
    rows.push_back({{"layer", e.layer}, {"weight", e.weight}, {"shape", e.shape}, {"offset", e.offset}});
  }
  std::ofstream(path) << rows.dump(1) << "\n";
}

// metrics.csv (epoch,loss,acc,...) of a run of one-step epochs as steps.csv (step,loss,acc).
void write_steps(const fs::path& metrics, const fs::path& steps) {
  std::ifstream in(metrics);
  std::ofstream out(steps);
  std::string line;
  std::getline(in, line);  // header
  out << "step,loss,acc\n";
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string epoch, loss, acc;
    std::getline(fields, epoch, ',');
    std::getline(fields, loss, ',');
    std::getline(fields, acc, ',');
    out << epoch << ',' << loss << ',' << acc << '\n';
  }
}

// Which features of `batch` images keyed first_key.. each Dropout layer keeps: the trainer's own
// masks (the backend's dropout with the layer's stream, as Model::train_batch calls it), as 0/1.
void append_kept(bt::Backend& backend, const bt::Model& model, int batch, std::uint64_t seed, std::uint64_t first_key,
                 std::vector<std::uint8_t>& kept) {
  for (const auto& site : model.dropout_sites()) {
    const std::size_t count = static_cast<std::size_t>(batch) * site.features;
    bt::Buffer ones = backend.allocate(count), y = backend.allocate(count), mask = backend.allocate(count);
    backend.fill(ones, 1.0f);
    backend.dropout_forward(ones, y, mask, site.rate, bt::dropout_layer_stream(seed, site.layer), first_key,
                            site.features);
    std::vector<float> host(count);
    backend.download(host.data(), mask, count);
    for (float m : host) kept.push_back(m != 0.0f ? 1 : 0);
    for (bt::Buffer* b : {&ones, &y, &mask}) backend.release(*b);
  }
}

// What the reference needs to take the same steps (rank 0 writes it before training): the initial
// weights, every rank's batches and, with augmentation or dropout, the images and the features kept,
// all from the functions run_training itself calls. Step t is epoch t's only step.
void write_shared_inputs(const fs::path& out, const bt::TrainOptions& o, int size, int steps, const bt::Dataset& train) {
  const int batch = o.batch_size;
  fs::create_directories(out);
  auto backend = bt::make_backend(bt::BackendKind::kCpu, 1);
  bt::Model model(*backend, bt::tutorial_network(), 1);
  model.init_glorot(o.seed);  // what every rank draws; the trainer broadcasts rank 0's
  write_table(out / "table.json", model.table());
  write_binary(out / "initial.f32", model.get_params());
  bt::AugmentConfig config;  // as run_training prepares its batches
  config.enabled = o.augmentation;
  std::vector<std::int32_t> order;
  std::vector<std::uint8_t> kept;
  std::vector<float> inputs, labels(static_cast<std::size_t>(batch));
  const std::size_t batch_floats = static_cast<std::size_t>(batch) * bt::kCifarImageBytes;
  for (int t = 0; t < steps; ++t) {
    for (int r = 0; r < size; ++r) {
      const bt::EpochPlan plan = bt::plan_epoch(train.count, batch, 1, false, r, size, o.seed, t);
      const int* images = plan.indices.data() + plan.batch_begin[0];
      order.insert(order.end(), images, images + batch);
      if (o.dropout) append_kept(*backend, model, batch, o.seed, plan.first_key[0], kept);
      if (!o.augmentation) continue;
      inputs.resize(inputs.size() + batch_floats);
      bt::prepare_batch(train, images, batch, config, o.seed, plan.first_key[0],
                        inputs.data() + inputs.size() - batch_floats, labels.data());
    }
  }
  write_binary(out / "order.i32", order);
  if (o.augmentation) write_binary(out / "inputs.f32", inputs);
  if (o.dropout) {
    nlohmann::json sites = nlohmann::json::array();
    for (const auto& site : model.dropout_sites()) sites.push_back({{"features", site.features}, {"rate", site.rate}});
    std::ofstream(out / "dropout.json") << sites.dump(1) << "\n";
    write_binary(out / "kept.u8", kept);
  }
}

}  // namespace

int main(int argc, char** argv) {
  bt::MpiSession session(&argc, &argv);
  CLI::App app{"batchai's half of the trainer's reference check (lockstep.py runs it under mpirun)"};
  std::string data_dir, out_dir;
  int batch = 32, steps = 30, threads = 1;
  unsigned seed = 1;
  std::string allreduce = "ring", precision = "float32";
  bool augment = false, dropout = false;
  app.add_option("--data-dir", data_dir, "CIFAR-10 binary files (plain)")->required();
  app.add_option("--out", out_dir, "Output folder")->required();
  app.add_option("--batch", batch, "Images per rank per step")->check(CLI::Range(1, 4096));
  app.add_option("--steps", steps, "Optimizer updates")->check(CLI::Range(1, 100000));
  app.add_option("--seed", seed, "Seed of the initial weights and of each rank's data order");
  app.add_option("--threads", threads, "CPU threads per rank")->check(CLI::Range(1, 256));
  app.add_option("--allreduce", allreduce, "As batchai train's: ring (shared memory on one host) or mpi")
      ->check(CLI::IsMember({"ring", "mpi"}));
  app.add_option("--precision", precision, "As batchai train's: float32 or mixed_bfloat16")
      ->check(CLI::IsMember({"float32", "mixed_bfloat16"}));
  app.add_flag("--augment", augment, "Train on augmented images (shifts and flips) and write them to inputs.f32");
  app.add_flag("--dropout", dropout, "Train with dropout and write which features it keeps to kept.u8");
  CLI11_PARSE(app, argc, argv);

  // As run_train_main opens it.
  const bt::AllreduceAlgorithm algorithm = bt::parse_allreduce_algorithm(allreduce);
  auto comm = bt::open_communicator(
      bt::choose_communicator(bt::describe_run(bt::BufferKind::kHost, session.size(), algorithm, false)), algorithm);
  const int size = comm->size();
  const fs::path out(out_dir);
  bt::TrainOptions o;
  o.data_dir = data_dir;
  o.batch_size = batch;
  o.seed = seed;
  o.threads = threads;
  o.allreduce = allreduce;
  o.precision = precision;
  o.augmentation = augment;
  o.dropout = dropout;
  o.steps_per_epoch = 1;
  o.validation_images = 1;  // the per-epoch validation is not compared: keep it trivial
  o.quiet = true;
  o.dir = (out / "run").string();

  const bt::Dataset train = bt::load_train_data(o).train;
  // Step t takes the t-th batch of one pass: the files hold full batches only within the first pass.
  if (static_cast<long long>(steps) * batch > train.count) {
    std::cerr << "--steps " << steps << " x --batch " << batch << " needs " << static_cast<long long>(steps) * batch
              << " training images; " << data_dir << " holds " << train.count << "\n";
    return 2;
  }
  if (comm->rank() == 0) {
    fs::remove_all(out / "run");  // nothing of an earlier run is read back
    write_shared_inputs(out, o, size, steps, train);
  }
  comm->barrier();

  // The first step's weights, then the rest of the run resumed from its checkpoint (exact).
  std::ostringstream sink;
  o.epochs = 1;
  const bt::TrainResult first = bt::run_training(o, *comm, sink);
  if (comm->rank() == 0) write_binary(out / "step-1.f32", first.params);
  o.epochs = steps;
  o.resume = true;
  bt::run_training(o, *comm, sink);
  if (comm->rank() == 0) {
    write_steps(out / "run" / "metrics.csv", out / "steps.csv");
    std::cout << "lockstep: " << steps << " steps of " << size << " ranks (" << comm->name() << ") x " << batch
              << " images written to " << out_dir << "\n";
  }
  return 0;
}
