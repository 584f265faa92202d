// batchai's half of the lockstep check (lockstep.py and late_lockstep.py are the port's half), run
// under mpirun with one process per rank: the training loop of `batchai train` itself
// (run_training, with the communicator it chooses: shared memory between ranks on one host), with
// the randomness both trainers can share taken out: epochs of --steps-per-epoch steps (default one,
// so that each epoch's metrics row is one step's loss), no augmentation unless --augment, no
// dropout unless --dropout. The initial weights (Glorot from --seed, rank 0's broadcast), every
// rank's batches (batchai's own per-rank shuffle) and, with --augment, the augmented images, with
// --dropout, which features the trainer keeps are written out for the port to use.
//
// Usage: mpirun -np RANKS tutorial_lockstep --data-dir DIR --out DIR [--batch 32] [--steps 30]
//                                           [--steps-per-epoch 1] [--seed 1] [--threads 1]
//                                           [--allreduce ring|mpi] [--augment] [--dropout]
//                                           [--start CHECKPOINT]
// Writes to OUT: table.json (each weight's Keras layer, name, shape and arena offset); initial.f32
// and step-1.f32 (the arena before and after the first epoch, Keras layout, float32 in this
// machine's byte order); order.i32 (int32 image indices [step][rank][image]); with --augment,
// inputs.f32 (the images as the trainer's batch preparation makes them, float32 [step][rank][image]
// [32][32][3] in [0, 1]); with --dropout, dropout.json (each Dropout layer's features per image, in
// the trainer's NHWC order, and rate) and kept.u8 (1 where the trainer keeps a feature: [step][rank]
// [layer][image][feature]); steps.csv (per epoch: its number, the loss averaged over its steps and
// the ranks' batches, accuracy); run/ (the trainer's own output).
//
// With --start CHECKPOINT (a `batchai train` checkpoint of the same seed, ranks and batch) the
// epochs begin from its weights, RMSprop accumulators and update count instead of Glorot: they are
// the epochs after the checkpoint's, resumed from it one at a time. Then also start.json (the
// checkpoint's epochs and updates) and state-K.f32 for K = 0..STEPS / S: the weights followed by
// the accumulators after K epochs (Keras layout, float32), so that the port can retake each of
// batchai's epochs from batchai's own state.
//
// With --orders EPOCHS --steps-per-epoch S it trains nothing: rank 0 writes table.json, initial.f32
// and orders.i32 (int32 [epoch][rank][the epoch's images], each rank's images of a whole schedule
// as the trainer's epoch plans give them: S steps of batch images from one stream of passes over
// the data, a step that ends a pass holding the remainder, so epochs can differ in length), the
// draws batchai_draws.py cannot recompute, for training the port on batchai's own draws.
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
#include "io/checkpoint.hpp"
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

// Where the run begins: Glorot from the seed, or a checkpoint of `batchai train`.
struct Start {
  int epoch = 0;               // epochs completed: the run goes on with epoch epoch+1
  long long global_step = 0;   // updates already applied (the lr decay's count)
  bt::Checkpoint checkpoint;   // its weights and accumulators; empty for Glorot
};

// A checkpoint the steps can go on from as `batchai train --resume` would: same seed (the draws),
// ranks (the lr and the averaging) and batch, and the tutorial network's parameter count.
Start read_start(const std::string& path, const bt::TrainOptions& o, int size, std::size_t param_count) {
  Start start;
  start.checkpoint = bt::load_checkpoint(path);
  const bt::Checkpoint& cp = start.checkpoint;
  const auto extra = [&](const char* key) { return cp.extra.count(key) ? cp.extra.at(key) : std::string("?"); };
  if (cp.seed != o.seed || extra("size") != std::to_string(size) || extra("batch") != std::to_string(o.batch_size) ||
      cp.params.size() != param_count || cp.optimizer_state.size() != param_count) {
    throw std::runtime_error(path + " is of seed " + std::to_string(cp.seed) + ", " + extra("size") + " ranks, batch " +
                             extra("batch") + ", " + std::to_string(cp.params.size()) + " parameters; this run is seed " +
                             std::to_string(o.seed) + ", " + std::to_string(size) + " ranks, batch " +
                             std::to_string(o.batch_size) + ", " + std::to_string(param_count));
  }
  start.epoch = cp.epoch;
  start.global_step = cp.global_step;
  return start;
}

// The first step (counted from 0) of `steps` steps from epoch `first_epoch` that holds fewer than a
// batch of images, or -1: the files this tool writes hold full batches. As plan_epoch cuts them,
// the steps are batches first_epoch * steps_per_epoch ... of one stream of passes of
// ceil(count / batch) batches, and only a pass's last batch can be short (arithmetic, not plans:
// planning 100,000 one-step epochs would shuffle the data 100,000 times on every rank).
long long first_short_step(int count, int batch, int steps_per_epoch, int steps, int first_epoch) {
  if (count % batch == 0) return -1;
  const long long per_pass = (static_cast<long long>(count) + batch - 1) / batch;
  const long long begin = static_cast<long long>(first_epoch) * steps_per_epoch;
  const long long last = begin + (per_pass - 1 - begin % per_pass);  // the first pass end from begin on
  return last < begin + steps ? last - begin : -1;
}

// Weights then accumulators, as the port reads a state.
void write_state(const fs::path& path, const bt::Checkpoint& cp) {
  std::vector<float> state = cp.params;
  state.insert(state.end(), cp.optimizer_state.begin(), cp.optimizer_state.end());
  write_binary(path, state);
}

// What the port needs to take the same steps (rank 0 writes it before training): the initial
// weights, every rank's batches and, with augmentation or dropout, the images and the features kept,
// all from the functions run_training itself calls.
void write_shared_inputs(const fs::path& out, const bt::TrainOptions& o, int size, int steps, const Start& start) {
  const int batch = o.batch_size;
  fs::create_directories(out);
  auto backend = bt::make_backend(bt::BackendKind::kCpu, 1);
  bt::Model model(*backend, bt::tutorial_network(), 1);
  model.init_glorot(o.seed);  // what every rank draws; the trainer broadcasts rank 0's
  write_table(out / "table.json", model.table());
  write_binary(out / "initial.f32", start.checkpoint.params.empty() ? model.get_params() : start.checkpoint.params);
  const bt::Dataset train = bt::load_train_data(o).train;
  bt::AugmentConfig config;  // as run_training prepares its batches
  config.enabled = o.augmentation;
  std::vector<std::int32_t> order;
  std::vector<std::uint8_t> kept;
  std::vector<float> inputs, labels(static_cast<std::size_t>(batch));
  const std::size_t batch_floats = static_cast<std::size_t>(batch) * bt::kCifarImageBytes;
  std::vector<bt::EpochPlan> plans(static_cast<std::size_t>(size));  // this epoch's, per rank
  for (int t = 0; t < steps; ++t) {
    const int s = t % o.steps_per_epoch;
    for (int r = 0; r < size; ++r) {
      bt::EpochPlan& plan = plans[static_cast<std::size_t>(r)];
      if (s == 0) {
        plan = bt::plan_epoch(train.count, batch, o.steps_per_epoch, false, r, size, o.seed,
                              start.epoch + t / o.steps_per_epoch);
      }
      const int* images = plan.indices.data() + plan.batch_begin[s];
      order.insert(order.end(), images, images + batch);
      if (o.dropout) append_kept(*backend, model, batch, o.seed, plan.first_key[s], kept);
      if (!o.augmentation) continue;
      inputs.resize(inputs.size() + batch_floats);
      bt::prepare_batch(train, images, batch, config, o.seed, plan.first_key[s],
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

// The initial weights and every rank's images of `epochs` epochs of `steps` steps (unsharded).
void write_schedule_orders(const fs::path& out, const bt::TrainOptions& o, int size, int epochs, int steps) {
  fs::create_directories(out);
  auto backend = bt::make_backend(bt::BackendKind::kCpu, 1);
  bt::Model model(*backend, bt::tutorial_network(), 1);
  model.init_glorot(o.seed);
  write_table(out / "table.json", model.table());
  write_binary(out / "initial.f32", model.get_params());
  const int count = bt::load_train_data(o).train.count;
  std::vector<std::int32_t> orders;
  for (int e = 0; e < epochs; ++e) {
    for (int r = 0; r < size; ++r) {
      const bt::EpochPlan plan = bt::plan_epoch(count, o.batch_size, steps, false, r, size, o.seed, e);
      orders.insert(orders.end(), plan.indices.begin(), plan.indices.end());
    }
  }
  write_binary(out / "orders.i32", orders);
}

}  // namespace

int main(int argc, char** argv) {
  bt::MpiSession session(&argc, &argv);
  CLI::App app{"batchai's half of the lockstep check against the PyTorch port (run under mpirun)"};
  std::string data_dir, out_dir;
  int batch = 32, steps = 30, threads = 1;
  unsigned seed = 1;
  std::string allreduce = "ring";
  bool augment = false, dropout = false;
  int orders_epochs = 0, steps_per_epoch = 1;
  std::string start_path;
  app.add_option("--data-dir", data_dir, "CIFAR-10 binary files (plain)")->required();
  app.add_option("--out", out_dir, "Output folder")->required();
  app.add_option("--batch", batch, "Images per rank per step")->check(CLI::Range(1, 4096));
  app.add_option("--steps", steps, "Optimizer updates")->check(CLI::Range(1, 100000));
  app.add_option("--seed", seed, "Seed of the initial weights and of each rank's data order");
  app.add_option("--threads", threads, "CPU threads per rank")->check(CLI::Range(1, 256));
  app.add_option("--allreduce", allreduce, "As batchai train's: ring (shared memory on one host) or mpi")
      ->check(CLI::IsMember({"ring", "mpi"}));
  app.add_flag("--augment", augment, "Train on augmented images (shifts and flips) and write them to inputs.f32");
  app.add_flag("--dropout", dropout, "Train with dropout and write which features it keeps to kept.u8");
  app.add_option("--start", start_path, "Begin from this batchai train checkpoint (weights, accumulators, updates)")
      ->check(CLI::ExistingFile);
  app.add_option("--orders", orders_epochs, "Only write a whole schedule's orders.i32 of this many epochs")
      ->check(CLI::Range(1, 1000));
  app.add_option("--steps-per-epoch", steps_per_epoch, "Steps of each epoch (of the training, or of --orders)")
      ->check(CLI::Range(1, 100000));
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
  o.augmentation = augment;
  o.dropout = dropout;
  o.steps_per_epoch = steps_per_epoch;
  o.validation_images = 1;  // the per-epoch validation is not compared: keep it trivial
  o.quiet = true;

  if (orders_epochs > 0) {
    if (comm->rank() == 0) write_schedule_orders(out, o, size, orders_epochs, steps_per_epoch);
    comm->barrier();
    return 0;
  }
  if (steps % steps_per_epoch != 0) {
    std::cerr << "--steps must be a multiple of --steps-per-epoch\n";
    return 2;
  }
  const int epochs = steps / steps_per_epoch;
  constexpr int kMaxKeptStates = 1000;  // --start keeps a state of 10 MB per epoch
  if (!start_path.empty() && epochs > kMaxKeptStates) {
    std::cerr << "--start keeps every epoch's state: at most " << kMaxKeptStates << " epochs\n";
    return 2;
  }
  o.dir = (out / "run").string();
  const fs::path run_checkpoint = out / "run" / bt::kCheckpointRelPath;
  Start start;
  if (!start_path.empty()) {
    auto backend = bt::make_backend(bt::BackendKind::kCpu, 1);
    try {  // every rank reads it, so every rank refuses it alike
      start = read_start(start_path, o, size, bt::Model(*backend, bt::tutorial_network(), 1).param_count());
    } catch (const std::exception& e) {
      std::cerr << "tutorial_lockstep: --start " << e.what() << "\n";
      return 2;
    }
  }
  if (const long long short_step =
          first_short_step(bt::load_train_data(o).train.count, batch, steps_per_epoch, steps, start.epoch);
      short_step >= 0) {
    std::cerr << "--steps-per-epoch: step " << short_step + 1 << " of this run ends a pass over the training set "
              << "with fewer than " << batch << " images; the files hold full batches\n";
    return 2;
  }
  if (comm->rank() == 0) {
    write_shared_inputs(out, o, size, steps, start);
    if (!start_path.empty()) {  // the run resumes from a copy; nothing of an earlier run is read back
      fs::remove_all(out / "run");  // (--start may lie in it: the copy is written from memory)
      fs::create_directories(run_checkpoint.parent_path());
      bt::save_checkpoint(run_checkpoint.string(), start.checkpoint);
      std::ofstream(out / "start.json") << nlohmann::json{{"epoch", start.epoch}, {"global_step", start.global_step}}
                                        << "\n";
      write_state(out / "state-0.f32", start.checkpoint);
    }
  }
  comm->barrier();

  std::ostringstream sink;
  if (start_path.empty()) {
    // The first epoch's weights, then the rest of the run resumed from its checkpoint (exact).
    o.epochs = 1;
    const bt::TrainResult first = bt::run_training(o, *comm, sink);
    if (comm->rank() == 0) write_binary(out / "step-1.f32", first.params);
    o.epochs = epochs;
    o.resume = true;
    bt::run_training(o, *comm, sink);
  } else {
    // One epoch at a time, each resumed from the last one's checkpoint, whose state is kept.
    o.resume = true;
    for (int k = 1; k <= epochs; ++k) {
      o.epochs = start.epoch + k;
      const bt::TrainResult step = bt::run_training(o, *comm, sink);
      if (comm->rank() != 0) continue;
      write_state(out / ("state-" + std::to_string(k) + ".f32"), bt::load_checkpoint(run_checkpoint.string()));
      if (k == 1) write_binary(out / "step-1.f32", step.params);
    }
  }
  if (comm->rank() == 0) {
    write_steps(out / "run" / "metrics.csv", out / "steps.csv");
    std::cout << "lockstep: " << steps << " steps of " << size << " ranks (" << comm->name() << ") x " << batch
              << " images written to " << out_dir << "\n";
  }
  return 0;
}
