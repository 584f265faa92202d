// The single-process communicator is the identity for every collective.
#include <gtest/gtest.h>

#include <vector>

#include "batchai/train/communicator.hpp"
#include "batchai/train/local_communicator.hpp"

namespace batchai::train {
namespace {

TEST(CommLocal, CollectivesLeaveDataUnchanged) {
  auto comm = make_local_communicator();
  EXPECT_EQ(comm->rank(), 0);
  EXPECT_EQ(comm->size(), 1);
  EXPECT_EQ(comm->name(), "local");
  std::vector<float> f = {1.5f, -2.0f, 3.0f};
  std::vector<double> d = {0.25, 4.0};
  comm->allreduce_sum(f.data(), f.size());
  comm->allreduce_sum(d.data(), d.size());
  comm->broadcast(f.data(), f.size(), 0);
  comm->allreduce_sum(static_cast<float*>(nullptr), 0);
  comm->barrier();
  comm->check_agreement(1250858, "parameter count");
  EXPECT_EQ(f, (std::vector<float>{1.5f, -2.0f, 3.0f}));
  EXPECT_EQ(d, (std::vector<double>{0.25, 4.0}));
}

}  // namespace
}  // namespace batchai::train
