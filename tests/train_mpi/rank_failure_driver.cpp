// Test driver: ranks loop on allreduce while one rank fails mid-run, the way a trainer rank
// might. Modes: "abort" (rank 1 throws, the error is printed, MpiSession::abort_all ends every
// rank), "exit" (rank 1 dies without MPI_Finalize, like a crash), "mismatch" (ranks disagree on
// the parameter count; every rank reports it), "stall" (rank 1 sleeps 20 s inside the loop;
// its neighbours report the stall and exit after BATCHAI_COMM_TIMEOUT_S=2 s), "size" (rank 1 reduces one
// float more than the others, without an agreement check). The ctest checks mpiexec ends promptly and
// non-zero with the message. A mode prefixed "shm-" runs the same on the communicator the chooser
// opens for ranks sharing a host (the shared-memory one) instead of the MPI ring.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "batchai/common/errors.hpp"
#include "batchai/train/communicator.hpp"
#include "batchai/train/mpi_communicator.hpp"
#include "batchai/train/mpi_session.hpp"
#include "comm/communicator_choice.hpp"

namespace {

constexpr int kFailStep = 20;

void run(const std::string& mode, batchai::train::Communicator& comm) {
  if (mode == "mismatch") {
    comm.check_agreement(comm.rank() == 1 ? 1250000 : 1250858, "parameter count");
  }
  std::vector<float> grads(mode == "size" && comm.rank() == 1 ? 100001 : 100000, 1.0f);
  for (int step = 0; step < 100000; ++step) {
    if (comm.rank() == 1 && step == kFailStep) {
      if (mode == "abort") {
        throw batchai::Error("simulated failure reading batch at step " + std::to_string(step));
      }
      if (mode == "stall") std::this_thread::sleep_for(std::chrono::seconds(20));
      if (mode == "exit") {
        std::fprintf(stderr, "rank 1: simulated crash at step %d\n", step);
        std::fflush(stderr);
        std::_Exit(4);
      }
    }
    comm.allreduce_sum(grads.data(), grads.size());
    for (float& g : grads) g = 1.0f;
  }
}

}  // namespace

int main(int argc, char** argv) {
  batchai::train::MpiSession mpi(&argc, &argv);
  using batchai::train::AllreduceAlgorithm;
  std::string mode = argc > 1 ? argv[1] : "abort";
  const bool shm = mode.rfind("shm-", 0) == 0;
  if (shm) mode = mode.substr(4);
  if (mode == "stall") ::setenv("BATCHAI_COMM_TIMEOUT_S", "2", 1);
  try {
    auto comm = shm ? batchai::train::open_communicator(
                          batchai::train::choose_communicator(batchai::train::describe_run(
                              batchai::train::BufferKind::kHost, mpi.size(), AllreduceAlgorithm::kRing, false)),
                          AllreduceAlgorithm::kRing)
                    : batchai::train::make_mpi_communicator(AllreduceAlgorithm::kRing);
    if (shm && comm->name() != "shm") throw batchai::Error("expected the shm communicator, got " + comm->name());
    run(mode, *comm);
  } catch (const batchai::Error& e) {
    std::fprintf(stderr, "rank %d: error: %s\n", mpi.rank(), e.what());
    batchai::train::MpiSession::abort_all(3);
  }
  std::printf("rank %d finished without failure (mode %s)\n", mpi.rank(), mode.c_str());
  return 0;
}
