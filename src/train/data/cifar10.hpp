// CIFAR-10 in its official binary layout (data_batch_1..5.bin, test_batch.bin, each a run of
// 3073-byte records: label byte then the CHW image): loading with size checks and locating the
// data. Learnable synthetic data in the same layout: data/synthetic_cifar10.hpp.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.hpp"

namespace batchai::train {

// File names in the official archive (inside its cifar-10-batches-bin/ folder).
const std::vector<std::string>& cifar10_train_files();  // data_batch_1.bin .. data_batch_5.bin
const std::string& cifar10_test_file();                 // test_batch.bin

// Reads one batch file; throws InvalidArgument when its size is not a multiple of 3073 bytes
// or a label is out of range, NotFound when it is missing.
Dataset load_cifar10_file(const std::string& path);
// All five training batches (or fewer images when synthetic files are smaller), concatenated.
// Throws NotFound with download instructions when `dir` does not hold CIFAR-10, InvalidArgument
// when its files hold no image (load_cifar10_test too).
Dataset load_cifar10_train(const std::string& dir);
Dataset load_cifar10_test(const std::string& dir);

// True when `dir` holds all six batch files.
bool has_cifar10(const std::string& dir);

}  // namespace batchai::train
