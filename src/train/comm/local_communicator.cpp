// Single-process communicator: size 1, so every collective leaves the data as it is.
#include "batchai/train/local_communicator.hpp"

namespace batchai::train {
namespace {

class LocalCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void allreduce_sum(float* /*data*/, std::size_t /*count*/) override {}
  void broadcast(float* /*data*/, std::size_t /*count*/, int /*root*/) override {}
  void allreduce_sum(double* /*data*/, std::size_t /*count*/) override {}
  void barrier() override {}
  void check_agreement(long long /*value*/, const std::string& /*what*/) override {}
  std::string name() const override { return "local"; }
  bool accepts(BufferKind /*kind*/) const override { return true; }  // nothing leaves the buffer
};

}  // namespace

std::unique_ptr<Communicator> make_local_communicator() {
  return std::make_unique<LocalCommunicator>();
}

}  // namespace batchai::train
