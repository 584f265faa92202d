// Wall time of the training step's phases (data, forward_backward, allreduce, update), summed per
// rank and gathered to every rank as mean milliseconds per step. The dashboard shows it as the
// per-rank timeline summary, so a run without --timeline still says where its steps go. On one
// rank the update also computes dense_1's weight gradient (Model::fold_dense_gradients).
#pragma once
#include <array>
#include <chrono>
#include <vector>

#include "batchai/train/communicator.hpp"

namespace batchai::train {

enum class Phase { kData = 0, kForwardBackward, kAllreduce, kUpdate };
inline constexpr std::size_t kPhaseCount = 4;
// JSON keys, in Phase order.
inline constexpr const char* kPhaseNames[kPhaseCount] = {"data", "forward_backward", "allreduce", "update"};

class StepPhases {
 public:
  void add(Phase phase, double ms) { total_ms_[static_cast<std::size_t>(phase)] += ms; }
  void end_step() { ++steps_; }
  long long steps() const { return steps_; }
  double total_ms(Phase phase) const { return total_ms_[static_cast<std::size_t>(phase)]; }

 private:
  std::array<double, kPhaseCount> total_ms_{};
  long long steps_ = 0;
};

// Adds the lifetime of one scope to a phase.
class PhaseScope {
 public:
  PhaseScope(StepPhases& phases, Phase phase)
      : phases_(phases), phase_(phase), start_(std::chrono::steady_clock::now()) {}
  ~PhaseScope() {
    phases_.add(phase_, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count());
  }
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  StepPhases& phases_;
  Phase phase_;
  std::chrono::steady_clock::time_point start_;
};

struct RankPhaseMeans {
  int rank = 0;
  long long steps = 0;
  std::array<double, kPhaseCount> mean_ms{};  // 0 when the rank ran no step
};

// Collective: every rank must call it. Each rank fills its own slot of a size x 5 table that one
// allreduce sums, so every rank gets the whole table (rank 0 writes it).
std::vector<RankPhaseMeans> gather_phase_means(const StepPhases& mine, Communicator& comm);

}  // namespace batchai::train
