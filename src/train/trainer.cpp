// The training loop, evaluation and the per-process entry point (see trainer.hpp).
#include "trainer.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

#include "batchai/common/errors.hpp"
#include "batchai/train/mpi_session.hpp"
#include "augment.hpp"
#include "io/checkpoint.hpp"
#include "io/dashboard_files.hpp"
#include "comm/communicator_choice.hpp"
#include "io/keras_h5.hpp"
#include "io/keras_model_config.hpp"
#include "io/metrics_log.hpp"
#include "optimizer.hpp"
#include "progress.hpp"
#include "step_phases.hpp"
#include "comm/host_layout.hpp"
#include "io/timeline.hpp"
#include "train_data.hpp"

namespace batchai::train {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The machine's cores shared among the ranks on this host (host_layout.hpp): a job's ranks in
// containers on one machine divide them as on the host. Collective when MPI runs.
int default_threads() {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return std::max(1, static_cast<int>(cores) / std::max(1, detail::ranks_on_this_host()));
}

struct Score {
  double loss = 0.0, acc = 0.0;
};

// Loss and accuracy over `limit` test images (0 = all), split across ranks and summed.
Score evaluate(Model& model, const Dataset& test, int limit, Communicator& comm) {
  const int total = limit > 0 ? std::min(limit, test.count) : test.count;
  const int begin = static_cast<int>(static_cast<long long>(total) * comm.rank() / comm.size());
  const int end = static_cast<int>(static_cast<long long>(total) * (comm.rank() + 1) / comm.size());
  const int batch = model.max_batch();
  std::vector<float> x(static_cast<std::size_t>(batch) * kCifarImageBytes), y(static_cast<std::size_t>(batch));
  std::vector<int> idx(static_cast<std::size_t>(batch));
  double sums[3] = {0.0, 0.0, 0.0};
  AugmentConfig plain;
  plain.enabled = false;
  for (int i = begin; i < end; i += batch) {
    const int n = std::min(batch, end - i);
    for (int k = 0; k < n; ++k) idx[k] = i + k;
    prepare_batch(test, idx.data(), n, plain, 0, 0, x.data(), y.data());
    const BatchStats s = model.evaluate_batch(x.data(), y.data(), n);
    sums[0] += s.loss_sum, sums[1] += s.correct, sums[2] += s.count;
  }
  comm.allreduce_sum(sums, 3);
  return Score{sums[0] / std::max(sums[2], 1.0), sums[1] / std::max(sums[2], 1.0)};
}

void print_test_score(std::ostream& out, const Score& s) {
  out << "Test loss: " << s.loss << "\n" << "Test accuracy: " << s.acc << "\n" << std::flush;
}

// The options' choices as enums, parsed once per run (resolve() has validated the words).
struct RunChoices {
  BackendKind backend;
  AllreduceAlgorithm allreduce;
  Precision precision;
};

RunChoices parse_choices(const TrainOptions& o) {
  return RunChoices{parse_backend_kind(o.backend), parse_allreduce_algorithm(o.allreduce),
                    parse_precision(o.precision)};
}

std::unique_ptr<Backend> backend_for(const TrainOptions& o, const RunChoices& choices) {
  return make_backend(choices.backend, o.threads > 0 ? o.threads : default_threads(), o.cuda_plugin,
                      choices.precision);
}

// Rank 0 reads the checkpoint; every rank gets its weights, optimizer state and position.
bool restore(const std::string& path, Model& model, RmsProp& opt, Communicator& comm, int* epoch,
             std::ostream& out) {
  double header[3] = {0.0, 0.0, 0.0};  // found, epoch, global step
  Checkpoint cp;
  if (comm.rank() == 0 && fs::exists(path)) {
    cp = load_checkpoint(path);
    if (cp.params.size() != model.param_count() || cp.optimizer_state.size() != model.param_count()) {
      throw InvalidArgument("checkpoint " + path + " holds " + std::to_string(cp.params.size()) +
                            " parameters but the model has " + std::to_string(model.param_count()) +
                            "; delete it or train into another --dir");
    }
    header[0] = 1.0, header[1] = cp.epoch, header[2] = static_cast<double>(cp.global_step);
  }
  comm.allreduce_sum(header, 3);  // only rank 0 contributes
  if (header[0] == 0.0) {
    if (comm.rank() == 0) out << "No checkpoint at " << path << "; starting from the beginning.\n";
    return false;
  }
  cp.params.resize(model.param_count());
  cp.optimizer_state.resize(model.param_count());
  comm.broadcast(cp.params.data(), cp.params.size(), 0);
  comm.broadcast(cp.optimizer_state.data(), cp.optimizer_state.size(), 0);
  model.set_params(cp.params);
  opt.set_state(cp.optimizer_state, static_cast<std::uint64_t>(header[2]));
  *epoch = static_cast<int>(header[1]);
  if (comm.rank() == 0) out << "Resuming from " << path << " after epoch " << *epoch << ".\n";
  return true;
}

void write_checkpoint(const std::string& path, int epoch, Model& model, RmsProp& opt, const TrainOptions& o,
                      int size) {
  fs::create_directories(fs::path(path).parent_path());
  Checkpoint cp;
  cp.epoch = epoch;
  cp.global_step = static_cast<long long>(opt.iterations());
  cp.seed = o.seed;
  cp.params = model.get_params();  // the arena is in Keras layout already
  cp.optimizer_state = opt.get_state();
  cp.extra = {{"model", "cifar10_cnn"}, {"size", std::to_string(size)}, {"batch", std::to_string(o.batch_size)}};
  save_checkpoint(path, cp);
}

TrainResult train_run(const TrainOptions& options, const RunChoices& choices, Communicator& comm, std::ostream& out) {
  const int rank = comm.rank(), size = comm.size();
  const TrainOptions o = resolve(options, size);
  const bool root = rank == 0;
  const TrainData data = load_train_data(o);
  comm.check_agreement(data.train.count, "the number of training images");
  const long long per_step = static_cast<long long>(o.batch_size) * (o.shard ? size : 1);
  const int steps = o.steps_per_epoch > 0 ? o.steps_per_epoch
                                          : static_cast<int>((data.train.count + per_step - 1) / per_step);

  auto backend = backend_for(o, choices);
  Model model(*backend, tutorial_network(), o.batch_size);
  // One rank: nothing stands between the backward pass and the update, so dense layers may be
  // updated from their gradients' factors (Model::fold_dense_gradients).
  model.fold_dense_gradients(size == 1);
  comm.check_agreement(static_cast<long long>(model.param_count()), "the parameter count");
  const BufferKind grad_buffers = model.grads().kind;
  comm.check_agreement(grad_buffers == BufferKind::kDevice ? 1 : 0, "whether gradients live on a device (--backend)");
  const CollectiveCandidate& chosen =
      choose_communicator(describe_run(grad_buffers, size, choices.allreduce, has_device_communicator()));
  // The host candidates reduce over the run's own communicator (run_train_main opens it with
  // the same chooser); only the device collectives are a communicator of their own.
  std::unique_ptr<Communicator> device_comm;
  if (chosen.kind == CollectiveKind::kNccl) device_comm = open_communicator(chosen, choices.allreduce);
  Communicator& grad_comm = device_comm ? *device_comm : comm;
  RmsPropConfig config;
  config.lr = o.lr;
  RmsProp opt(model, config);
  model.init_glorot(o.seed);
  const std::string checkpoint_path = o.dir + "/" + kCheckpointRelPath;
  int start_epoch = 0;
  if (!o.resume || !restore(checkpoint_path, model, opt, comm, &start_epoch, out)) {
    // Horovod's BroadcastGlobalVariablesCallback(0): every rank starts from rank 0's weights.
    std::vector<float> p = model.get_params();
    comm.broadcast(p.data(), p.size(), 0);
    model.set_params(p);
  }

  Timeline timeline;
  std::unique_ptr<Timeline> enabled_timeline;
  if (!o.timeline.empty()) {
    enabled_timeline = std::make_unique<Timeline>(rank == 0 ? o.timeline : o.timeline + "." + std::to_string(rank),
                                                  rank);
  }
  Timeline& tl = enabled_timeline ? *enabled_timeline : timeline;
  std::unique_ptr<MetricsLog> metrics;
  if (root) {
    fs::create_directories(o.dir);
    metrics = std::make_unique<MetricsLog>(o.dir, "metrics", o.resume);
  }
  // Rank 0's copies for the dashboard; the phase table is gathered from every rank regardless.
  DashboardFiles dashboard = root ? DashboardFiles::from_env(std::cerr) : DashboardFiles("", {}, std::cerr);
  StepPhases phases;
  // Under mpirun, Open MPI gives rank 0 a pty even when mpirun's own output goes to a job log,
  // so in-place '\r' updates are used only for a single process on a real terminal.
  const bool terminal = size == 1 && &out == &std::cout && isatty(STDOUT_FILENO) != 0;
  ProgressPrinter printer(out, terminal, o.progress_interval_s, root && !o.quiet);
  AugmentConfig augment;
  augment.enabled = o.augmentation;
  BatchPrefetcher prefetch(data.train, augment, o.seed, o.batch_size,
                           backend->computes_on_host() ? PrepareOn::kOnTeam : PrepareOn::kAhead);

  TrainResult result;
  Score val;
  bool val_full = false;
  const float inv_size = 1.0f / static_cast<float>(size);
  for (int epoch = start_epoch; epoch < o.epochs; ++epoch) {
    const EpochPlan plan = plan_epoch(data.train.count, o.batch_size, steps, o.shard, rank, size, o.seed, epoch);
    printer.begin_epoch(epoch + 1, o.epochs, steps);
    const auto epoch_start = Clock::now();
    double train_s = 0.0, sums[3] = {0.0, 0.0, 0.0};  // loss sum, correct, images
    auto request = [&](int s) {
      prefetch.request(plan.indices.data() + plan.batch_begin[s], plan.batch_begin[s + 1] - plan.batch_begin[s],
                       plan.first_key[s]);
    };
    if (steps > 0) request(0);
    for (int s = 0; s < steps; ++s) {
      const auto t0 = Clock::now();
      const float *x = nullptr, *y = nullptr;
      int n = 0;
      {
        ScopedSpan span(tl, "data");
        PhaseScope phase(phases, Phase::kData);
        prefetch.wait(&x, &y, &n);
      }
      if (s + 1 < steps) request(s + 1);  // prepared meanwhile, or at the next wait (PrepareOn)
      BatchStats st;
      {
        ScopedSpan span(tl, "forward_backward");
        PhaseScope phase(phases, Phase::kForwardBackward);
        if (n > 0) {
          st = model.train_batch(x, y, n, o.dropout, o.seed, plan.first_key[s]);
        } else {
          model.zero_grads();
        }
      }
      if (size > 1) {
        ScopedSpan span(tl, "allreduce");
        PhaseScope phase(phases, Phase::kAllreduce);
        grad_comm.allreduce_buffer(model.grads());
        backend->scale(model.grads(), inv_size);
      }
      {
        ScopedSpan span(tl, "update");
        PhaseScope phase(phases, Phase::kUpdate);
        opt.step();
      }
      phases.end_step();
      train_s += std::chrono::duration<double>(Clock::now() - t0).count();
      sums[0] += st.loss_sum, sums[1] += st.correct, sums[2] += st.count;
      printer.update(s + 1, sums[0] / std::max(sums[2], 1.0), sums[1] / std::max(sums[2], 1.0));
    }
    comm.allreduce_sum(sums, 3);  // Horovod's MetricAverageCallback: epoch metrics over all ranks
    result.train_loss = sums[0] / std::max(sums[2], 1.0);
    result.train_acc = sums[1] / std::max(sums[2], 1.0);
    {
      ScopedSpan span(tl, "evaluate");
      val = evaluate(model, data.test, o.validation_images, comm);
      val_full = o.validation_images <= 0 || o.validation_images >= data.test.count;
    }
    const double epoch_s = std::chrono::duration<double>(Clock::now() - epoch_start).count();
    printer.end_epoch(result.train_loss, result.train_acc, val.loss, val.acc);
    result.train_seconds += train_s;
    result.images_per_sec = sums[2] / size / std::max(train_s, 1e-9);
    ++result.epochs_run;
    const std::vector<RankPhaseMeans> phase_means = gather_phase_means(phases, comm);  // every rank
    if (root) {
      EpochMetrics row;
      row.epoch = epoch + 1;
      row.loss = result.train_loss, row.acc = result.train_acc;
      row.val_loss = val.loss, row.val_acc = val.acc;
      row.lr = opt.lr_at(opt.iterations());
      row.seconds = epoch_s;
      row.images_per_sec = sums[2] / std::max(train_s, 1e-9);
      metrics->append(row);
      dashboard.write_metrics(MetricsLog::to_json(metrics->rows()));
      dashboard.write_manifest("", &phase_means);
      ScopedSpan span(tl, "checkpoint");
      write_checkpoint(checkpoint_path, epoch + 1, model, opt, o, size);
    }
  }
  result.global_step = static_cast<long long>(opt.iterations());
  result.params = model.get_params();
  if (root) {
    const std::string path = o.dir + "/" + kSavedModelRelPath;
    fs::create_directories(fs::path(path).parent_path());
    save_keras_h5(path, tutorial_model_config_json(), keras_training_config_json(opt.config()), model.table(),
                  result.params);
    if (!o.quiet) out << "Saved trained model at " << path << " \n";
  }
  const std::vector<RankPhaseMeans> final_phases = gather_phase_means(phases, comm);  // every rank
  if (root) dashboard.write_manifest(o.dir + "/" + kSavedModelRelPath, &final_phases);
  if (!val_full || result.epochs_run == 0) val = evaluate(model, data.test, 0, comm);
  result.test_loss = val.loss, result.test_acc = val.acc;
  if (root && !o.quiet) print_test_score(out, val);
  if (enabled_timeline) enabled_timeline->flush();
  return result;
}

TrainResult evaluate_saved(const TrainOptions& options, const RunChoices& choices, Communicator& comm,
                           std::ostream& out) {
  const TrainOptions o = resolve(options, comm.size());
  auto backend = backend_for(o, choices);
  Model model(*backend, tutorial_network(), o.batch_size);
  const KerasModelFile file = load_keras_h5(o.evaluate);
  std::vector<float> weights(model.param_count());
  keras_weights_to_table(file, model.table(), weights);
  model.set_params(weights);
  TrainOptions data_options = o;
  const TrainData data = load_train_data(data_options);
  const Score s = evaluate(model, data.test, 0, comm);
  if (comm.rank() == 0) print_test_score(out, s);
  TrainResult r;
  r.test_loss = s.loss, r.test_acc = s.acc;
  r.params = weights;
  return r;
}

}  // namespace

TrainResult run_training(const TrainOptions& options, Communicator& comm, std::ostream& out) {
  return train_run(options, parse_choices(options), comm, out);
}

TrainResult run_evaluation(const TrainOptions& options, Communicator& comm, std::ostream& out) {
  return evaluate_saved(options, parse_choices(options), comm, out);
}

int run_train_main(const TrainOptions& options) {
  MpiSession session(nullptr, nullptr);
  try {
    const RunChoices choices = parse_choices(options);
    // The run's communicator carries host data (weights, metrics, checks) and host gradients.
    std::unique_ptr<Communicator> comm =
        open_communicator(choose_communicator(describe_run(BufferKind::kHost, session.size(), choices.allreduce, false)),
                          choices.allreduce);
    if (!options.evaluate.empty()) {
      evaluate_saved(options, choices, *comm, std::cout);
    } else {
      train_run(options, choices, *comm, std::cout);
    }
  } catch (const std::exception& e) {
    if (session.size() > 1) {
      std::cerr << "batchai train: rank " << session.rank() << " of " << session.size() << ": " << e.what()
                << "\n(ending every rank)\n"
                << std::flush;
      MpiSession::abort_all(1);
    }
    throw;
  }
  return 0;
}

}  // namespace batchai::train
