// CIFAR-10 binary reader and the synthetic writer. A batch file is a run of 3073-byte records
// (label, then 1024 R, 1024 G, 1024 B bytes); we keep exactly that layout in memory.
#include "data/cifar10.hpp"

#include <filesystem>
#include <fstream>

#include "batchai/common/errors.hpp"

namespace batchai::train {
namespace fs = std::filesystem;

namespace {

std::string missing_message(const std::string& dir, const std::string& file) {
  return "CIFAR-10 not found in '" + dir + "': expected data_batch_1.bin .. data_batch_5.bin and "
         "test_batch.bin (missing " + file + "). Download "
         "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz and extract its "
         "cifar-10-batches-bin/ files there (or pass --data-dir, or set BATCHAI_CIFAR10_DIR, or "
         "allow the trainer to download it)";
}

void append(Dataset& into, const Dataset& part) {
  into.images.insert(into.images.end(), part.images.begin(), part.images.end());
  into.labels.insert(into.labels.end(), part.labels.begin(), part.labels.end());
  into.count += part.count;
}

}  // namespace

const std::vector<std::string>& cifar10_train_files() {
  static const std::vector<std::string> kFiles = {"data_batch_1.bin", "data_batch_2.bin",
                                                  "data_batch_3.bin", "data_batch_4.bin",
                                                  "data_batch_5.bin"};
  return kFiles;
}

const std::string& cifar10_test_file() {
  static const std::string kFile = "test_batch.bin";
  return kFile;
}

Dataset load_cifar10_file(const std::string& path) {
  std::error_code ec;
  const auto bytes = fs::file_size(path, ec);
  if (ec) throw NotFound("CIFAR-10 batch file '" + path + "' cannot be read: " + ec.message());
  if (bytes % kCifarRecordBytes != 0) {
    throw InvalidArgument("CIFAR-10 batch file '" + path + "' has " + std::to_string(bytes) +
                          " bytes, not a multiple of the 3073-byte record: the file is "
                          "truncated or not the binary version; download it again");
  }
  std::ifstream in(path, std::ios::binary);
  std::vector<char> raw(bytes);
  if (!in.read(raw.data(), static_cast<std::streamsize>(bytes))) {
    throw SystemError("reading CIFAR-10 batch file '" + path + "' failed");
  }
  Dataset data;
  data.count = static_cast<int>(bytes / kCifarRecordBytes);
  data.labels.resize(static_cast<std::size_t>(data.count));
  data.images.resize(static_cast<std::size_t>(data.count) * kCifarImageBytes);
  for (std::size_t i = 0; i < data.labels.size(); ++i) {
    const char* rec = raw.data() + i * kCifarRecordBytes;
    const auto label = static_cast<std::uint8_t>(rec[0]);
    if (label >= kCifarClasses) {
      throw InvalidArgument("CIFAR-10 batch file '" + path + "': record " + std::to_string(i) +
                            " has label " + std::to_string(label) +
                            " (expected 0..9); the file is corrupt or not CIFAR-10");
    }
    data.labels[i] = label;
    std::copy(rec + 1, rec + kCifarRecordBytes,
              reinterpret_cast<char*>(data.images.data() + i * kCifarImageBytes));
  }
  return data;
}

bool has_cifar10(const std::string& dir) {
  if (dir.empty()) return false;
  for (const auto& f : cifar10_train_files()) {
    if (!fs::is_regular_file(fs::path(dir) / f)) return false;
  }
  return fs::is_regular_file(fs::path(dir) / cifar10_test_file());
}

Dataset load_cifar10_train(const std::string& dir) {
  Dataset all;
  for (const auto& f : cifar10_train_files()) {
    const fs::path p = fs::path(dir) / f;
    if (!fs::is_regular_file(p)) throw NotFound(missing_message(dir, f));
    append(all, load_cifar10_file(p.string()));
  }
  // An epoch cuts its batches from the images: with none there is nothing to train on.
  if (all.count == 0) throw InvalidArgument("no training images in " + dir + " (its data_batch files are empty)");
  return all;
}

Dataset load_cifar10_test(const std::string& dir) {
  const fs::path p = fs::path(dir) / cifar10_test_file();
  if (!fs::is_regular_file(p)) throw NotFound(missing_message(dir, cifar10_test_file()));
  Dataset test = load_cifar10_file(p.string());
  if (test.count == 0) throw InvalidArgument("no test images in " + dir + " (" + cifar10_test_file() + " is empty)");
  return test;
}

}  // namespace batchai::train
