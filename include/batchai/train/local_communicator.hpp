// The one-process communicator (comm/local_communicator.cpp): runs without MPI, for single-rank
// runs and tests.
#pragma once
#include <memory>

#include "batchai/train/communicator.hpp"

namespace batchai::train {

// Single-process communicator: size 1, every collective is a no-op.
std::unique_ptr<Communicator> make_local_communicator();

}  // namespace batchai::train
