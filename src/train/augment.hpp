// Turning stored CIFAR-10 records into a training batch: CHW bytes -> NHWC floats in [0, 1]
// (x / 255), with Keras ImageDataGenerator's augmentation when enabled: random shifts up to
// 10% of width and height (nearest-pixel sampling as Keras 2.1 does, fill_mode "nearest") and
// random horizontal flips.
// Image i's randomness comes from (seed, first_key + i): callers pass the image's position in
// the epoch, so N sharded ranks draw exactly what one rank with the global batch draws.
#pragma once
#include <cstdint>
#include <future>
#include <vector>

#include "data/dataset.hpp"

namespace batchai::train {

struct AugmentConfig {
  bool enabled = true;
  double width_shift = 0.1;   // fraction of the width
  double height_shift = 0.1;  // fraction of the height
  bool horizontal_flip = true;
};

// One image: CHW uint8 (3 x 32 x 32) -> HWC float, shifted by (dy, dx) pixels (output (y, x)
// copies the source pixel nearest to (y - dy, x - dx), edges clamped) and mirrored when `flip`.
void transform_image(const std::uint8_t* chw, float dy, float dx, bool flip, float* hwc);

// Fills x (n x 32 x 32 x 3) and labels (n, class index as float) for dataset images `indices`.
void prepare_batch(const Dataset& data, const int* indices, int n, const AugmentConfig& config,
                   std::uint64_t seed, std::uint64_t first_key, float* x, float* labels);

// Where a batch is prepared:
// - kAhead: on a helper thread while the batch before trains (a device backend, whose step leaves
//   the host's cores idle);
// - kOnTeam: when it is waited for, split over the OpenMP team (the CPU backend, whose compute
//   threads hold every core: a helper thread gets one only when the step stops to wait for it;
//   on 2 cores that cost 0.16 ms of waiting and 0.04 ms of thread start a step, against 0.02 ms
//   for the team to prepare 32 images).
enum class PrepareOn { kAhead, kOnTeam };

// Double buffer: request() names the next batch, wait() hands it over prepared.
class BatchPrefetcher {
 public:
  BatchPrefetcher(const Dataset& data, AugmentConfig config, std::uint64_t seed, int max_batch,
                  PrepareOn where = PrepareOn::kAhead);
  ~BatchPrefetcher();
  // Starts preparing `indices` (copied) with keys first_key..; at most one request in flight.
  void request(const int* indices, int n, std::uint64_t first_key);
  // Waits for the last request; the returned pointers stay valid until the next request.
  void wait(const float** x, const float** labels, int* n);

 private:
  const Dataset& data_;
  AugmentConfig config_;
  std::uint64_t seed_;
  int max_batch_;
  PrepareOn where_;
  std::uint64_t first_key_ = 0;
  bool requested_ = false;  // kOnTeam: a request not yet prepared
  std::vector<float> x_[2], labels_[2];
  std::vector<int> indices_;
  int slot_ = 0, n_ = 0;
  std::future<void> pending_;
};

}  // namespace batchai::train
