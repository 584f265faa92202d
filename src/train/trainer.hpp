// The data-parallel training loop of `batchai train` with Horovod semantics: rank 0 broadcasts
// the initial weights, every step's gradients are summed over ranks and scaled by 1/size, and
// only rank 0 prints progress, writes checkpoints, metrics and the saved Keras model.
#pragma once
#include <ostream>
#include <vector>

#include "batchai/train/communicator.hpp"
#include "batchai/train/train_options.hpp"

namespace batchai::train {

struct TrainResult {
  int epochs_run = 0;              // epochs trained by this call (not counting resumed ones)
  long long global_step = 0;       // optimizer updates in total (including resumed ones)
  double train_loss = 0.0, train_acc = 0.0;  // last epoch, averaged over ranks
  double test_loss = 0.0, test_acc = 0.0;    // final evaluation on the test set
  double train_seconds = 0.0;      // wall time in training steps (no evaluation)
  double images_per_sec = 0.0;     // per rank
  std::vector<float> params;       // final weights (Keras layout)
};

// Trains as the options say, on this rank of `comm`. Progress goes to `out` on rank 0.
TrainResult run_training(const TrainOptions& options, Communicator& comm, std::ostream& out);
// --evaluate: scores a saved Keras .h5 on the test set; prints "Test loss:" / "Test accuracy:".
TrainResult run_evaluation(const TrainOptions& options, Communicator& comm, std::ostream& out);

// Whole command for one process: MPI session, communicator, training or evaluation. On a
// multi-rank run an error on one rank is printed with its rank and ends every rank
// (MPI_Abort) instead of leaving the others waiting; on one rank it is rethrown.
int run_train_main(const TrainOptions& options);

}  // namespace batchai::train
