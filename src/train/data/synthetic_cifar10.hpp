// Synthetic CIFAR-10 in the official binary layout (synthetic_cifar10.cpp): learnable images for
// tests and --synthetic runs.
#pragma once
#include <cstdint>
#include <string>

namespace batchai::train {

// Writes data_batch_1..5.bin (n_train split across them) and test_batch.bin into `dir`
// (created if needed). Images are class-dependent coloured shapes plus noise, so a small CNN
// gets well above 10% accuracy within a few hundred steps. Deterministic for a given seed.
void write_synthetic_cifar10(const std::string& dir, int n_train, int n_test,
                             std::uint64_t seed);
// One synthetic image (CHW, 3072 bytes) of class `label`, for tests and the writer above.
void synthetic_image(int label, std::uint64_t seed, std::uint8_t* out);

}  // namespace batchai::train
