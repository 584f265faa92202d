// Per-operation timing of the CPU backend (see cpu_profile.hpp).
#include "cpu/cpu_profile.hpp"

#include <algorithm>

namespace batchai::train::cpu {

void CpuProfile::add(const std::string& op, const std::string& shape, const std::string& phase, double seconds,
                     double flops) {
  for (auto& e : entries_) {
    if (e.op == op && e.shape == shape && e.phase == phase) {
      e.seconds += seconds;
      ++e.calls;
      e.samples.push_back(seconds);
      return;
    }
  }
  entries_.push_back(Entry{op, shape, phase, seconds, flops, 1, {seconds}});
}

double CpuProfile::Entry::median() const {
  if (samples.empty()) return 0.0;
  std::vector<double> s = samples;
  std::nth_element(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(s.size() / 2), s.end());
  return s[s.size() / 2];
}

std::string conv_shape_label(const ConvShape& s) {
  return std::to_string(s.h) + "x" + std::to_string(s.w) + "x" + std::to_string(s.c) + ">" + std::to_string(s.out);
}

std::string dense_shape_label(const DenseShape& s) { return std::to_string(s.in) + ">" + std::to_string(s.out); }

std::string elementwise_shape_label(int h, int w, int c) {
  return std::to_string(h) + "x" + std::to_string(w) + "x" + std::to_string(c);
}

}  // namespace batchai::train::cpu
