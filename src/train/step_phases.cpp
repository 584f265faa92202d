// gather_phase_means: one small allreduce of a rank-indexed table (see step_phases.hpp).
#include "step_phases.hpp"

namespace batchai::train {

std::vector<RankPhaseMeans> gather_phase_means(const StepPhases& mine, Communicator& comm) {
  constexpr std::size_t kRow = 1 + kPhaseCount;  // steps, then the phases' totals
  const auto size = static_cast<std::size_t>(comm.size());
  std::vector<double> table(size * kRow, 0.0);
  double* row = table.data() + static_cast<std::size_t>(comm.rank()) * kRow;
  row[0] = static_cast<double>(mine.steps());
  for (std::size_t p = 0; p < kPhaseCount; ++p) row[1 + p] = mine.total_ms(static_cast<Phase>(p));
  comm.allreduce_sum(table.data(), table.size());
  std::vector<RankPhaseMeans> out(size);
  for (std::size_t r = 0; r < size; ++r) {
    const double* t = table.data() + r * kRow;
    out[r].rank = static_cast<int>(r);
    out[r].steps = static_cast<long long>(t[0]);
    for (std::size_t p = 0; p < kPhaseCount; ++p) out[r].mean_ms[p] = t[0] > 0 ? t[1 + p] / t[0] : 0.0;
  }
  return out;
}

}  // namespace batchai::train
