// Run under mpiexec -n N: N ranks with --shard and batch B each must reach the same weights as
// one rank with batch N*B (same global batches, gradients averaged by the communicator the
// trainer chooses: the shared-memory one when ranks share a host), to 1e-5. Augmentation and
// dropout stay on: both draw per image from its epoch position, so an image is treated alike
// whichever rank trains it. The dashboard's manifest that rank 0 writes to
// $AZ_BATCHAI_STDOUTERR_DIR names every rank with its step count (gathered from all ranks).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <filesystem>
#include <sstream>

#include "batchai/train/local_communicator.hpp"
#include "batchai/train/mpi_communicator.hpp"
#include "batchai/train/mpi_session.hpp"
#include "comm/communicator_choice.hpp"
#include "model.hpp"
#include "trainer.hpp"

namespace bt = batchai::train;

int main(int argc, char** argv) {
  bt::MpiSession session(&argc, &argv);
  // As run_train_main opens it.
  auto comm = bt::open_communicator(
      bt::choose_communicator(bt::describe_run(bt::BufferKind::kHost, session.size(), bt::AllreduceAlgorithm::kRing, false)),
      bt::AllreduceAlgorithm::kRing);
  const int size = comm->size();
  const auto dir = std::filesystem::temp_directory_path() / ("batchai_shard_mpi_" + std::to_string(size));
  bt::TrainOptions o;
  o.dir = (dir / "ranks").string();
  o.synthetic = 256;
  o.batch_size = 4;
  o.shard = true;
  o.epochs = 2;
  o.steps_per_epoch = 3;
  o.lr = 1e-4;
  o.threads = 1;
  o.quiet = true;
  o.validation_images = 32;
  const auto stdouterr = dir / "stdouterr";
  ::setenv("AZ_BATCHAI_STDOUTERR_DIR", stdouterr.string().c_str(), 1);
  if (comm->rank() == 0) std::filesystem::create_directories(stdouterr);
  comm->barrier();
  std::ostringstream sink;
  const bt::TrainResult many = bt::run_training(o, *comm, sink);
  ::unsetenv("AZ_BATCHAI_STDOUTERR_DIR");
  int failed = 0;
  if (comm->rank() == 0) {
    std::ifstream in(stdouterr / "batchai-manifest.json");
    const auto ranks = nlohmann::json::parse(in).at("timelineSummary").at("ranks");
    bool manifest_ok = static_cast<int>(ranks.size()) == size;
    for (int r = 0; manifest_ok && r < size; ++r) {
      manifest_ok = ranks[r].at("rank") == r && ranks[r].at("steps") == 6 &&
                    ranks[r].at("meanMs").at("allreduce").get<double>() > 0.0;
    }
    std::printf("manifest: %zu ranks, each 6 steps with allreduce time %s\n", ranks.size(), manifest_ok ? "OK" : "FAIL");
    failed |= manifest_ok ? 0 : 1;
    auto local = bt::make_local_communicator();
    bt::TrainOptions one = o;
    one.dir = (dir / "one").string();
    one.batch_size = o.batch_size * size;
    const bt::TrainResult single = bt::run_training(one, *local, sink);
    double max_diff = 0.0, max_move = 0.0;
    for (std::size_t i = 0; i < single.params.size(); ++i) {
      max_diff = std::max(max_diff, static_cast<double>(std::abs(many.params[i] - single.params[i])));
    }
    // The weights must have moved, or equality would prove nothing.
    auto backend = bt::make_backend(bt::BackendKind::kCpu, 1);
    bt::Model model(*backend, bt::tutorial_network(), 1);
    model.init_glorot(o.seed);
    const std::vector<float> init = model.get_params();
    for (std::size_t i = 0; i < init.size(); ++i) {
      max_move = std::max(max_move, static_cast<double>(std::abs(init[i] - single.params[i])));
    }
    failed |= (max_diff < 1e-5 && max_move > 1e-4 && many.global_step == single.global_step) ? 0 : 1;
    std::printf("%d ranks (%s) x batch %d vs 1 rank x batch %d: max |dw| = %.3g (weights moved %.3g, steps %lld/%lld) %s\n",
                size, comm->name().c_str(), o.batch_size, one.batch_size, max_diff, max_move, many.global_step,
                single.global_step,
                failed ? "FAIL" : "OK");
    std::filesystem::remove_all(dir);
  }
  double flag = failed;
  comm->allreduce_sum(&flag, 1);
  return flag == 0.0 ? 0 : 1;
}
