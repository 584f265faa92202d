// Optional per-operation timing of the CPU backend for the benchmark's roofline (train_bench
// --roofline): each timed piece of a step (a convolution's forward, backward-data or
// backward-weights, a dense layer's, pooling, dropout, the loss, the optimizer) adds its wall
// time and floating-point operations under a label naming the operation and its shape.
#pragma once
#include <chrono>
#include <string>
#include <vector>

#include "batchai/train/backend.hpp"

namespace batchai::train::cpu {

class CpuProfile {
 public:
  struct Entry {
    std::string op;     // "conv", "dense", "maxpool", "dropout", "loss", "rmsprop", "scale"
    std::string shape;  // the operation's shape, as the *_shape_label functions below spell it
    std::string phase;  // "fwd", "bwd-data", "bwd-weights", "update", ...
    double seconds = 0.0;
    double flops = 0.0;  // per call
    long calls = 0;
    std::vector<double> samples;  // each call's seconds
    // The median call's seconds (robust to the time slices a loaded machine takes away).
    double median() const;
  };
  // Adds one call's seconds to the entry (op, shape, phase), creating it in first-seen order.
  void add(const std::string& op, const std::string& shape, const std::string& phase, double seconds,
           double flops);
  const std::vector<Entry>& entries() const { return entries_; }
  void clear() { entries_.clear(); }

 private:
  std::vector<Entry> entries_;
};

// Shape labels shared by the backend and the benchmark (which finds a layer's rows by them).
std::string conv_shape_label(const ConvShape& s);    // "32x32x3>32"
std::string dense_shape_label(const DenseShape& s);  // "2304>512"
std::string elementwise_shape_label(int h, int w, int c);  // "30x30x32"

// Times one scope into a profile; does nothing when the profile is null.
class ProfileScope {
 public:
  ProfileScope(CpuProfile* profile, const char* op, std::string shape, const char* phase, double flops = 0.0)
      : profile_(profile), op_(op), shape_(std::move(shape)), phase_(phase), flops_(flops),
        start_(profile != nullptr ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{}) {}
  ~ProfileScope() {
    if (profile_ == nullptr) return;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    profile_->add(op_, shape_, phase_, s, flops_);
  }
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

 private:
  CpuProfile* profile_;
  const char* op_;
  std::string shape_;
  const char* phase_;
  double flops_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace batchai::train::cpu
