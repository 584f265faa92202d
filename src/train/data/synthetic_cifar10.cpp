// Synthetic CIFAR-10: each class is a distinct shape in a distinct colour on a noisy
// background, shifted a little per image. Easy enough that a small CNN learns it in a few
// hundred steps, so end-to-end tests can check that training really lowers the loss.
#include "data/synthetic_cifar10.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "batchai/common/errors.hpp"
#include "data/cifar10.hpp"
#include "batchai/train/counter_rng.hpp"

namespace batchai::train {
namespace fs = std::filesystem;

namespace {

// A splitmix64 stream: tiny, deterministic across platforms.
struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    const std::uint64_t z = splitmix64(s);
    s += 0x9e3779b97f4a7c15ULL;
    return z;
  }
  int uniform(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }
};

constexpr std::uint8_t kPalette[kCifarClasses][3] = {
    {230, 40, 40},  {40, 200, 40},  {50, 80, 240},  {240, 220, 40}, {220, 50, 220},
    {40, 220, 220}, {250, 150, 30}, {240, 240, 240}, {130, 70, 20},  {120, 120, 255}};

// Whether pixel (y, x) belongs to the shape of `label`, centred at (cy, cx).
bool in_shape(int label, int y, int x, int cy, int cx) {
  const int dy = y - cy;
  const int dx = x - cx;
  switch (label % 5) {
    case 0: return std::abs(dy) <= 7 && std::abs(dx) <= 7;                 // square
    case 1: return dy * dy + dx * dx <= 64;                                // disc
    case 2: return std::abs(dy) <= 9 && std::abs(dx) <= 9 && (y / 3) % 2 == 0;  // stripes
    case 3: return std::abs(dy) <= 9 && std::abs(dx) <= 9 && (std::abs(dy - dx) <= 1 ||
                                                             std::abs(dy + dx) <= 1);  // X
    default: return std::abs(dy) + std::abs(dx) <= 9;                      // diamond
  }
}

void write_file(const fs::path& path, int first, int n, std::uint64_t seed) {
  std::vector<std::uint8_t> buf(static_cast<std::size_t>(n) * kCifarRecordBytes);
  for (int i = 0; i < n; ++i) {
    std::uint8_t* rec = buf.data() + static_cast<std::size_t>(i) * kCifarRecordBytes;
    Rng rng{seed * 1000003ULL + static_cast<std::uint64_t>(first + i)};
    const int label = rng.uniform(kCifarClasses);
    rec[0] = static_cast<std::uint8_t>(label);
    synthetic_image(label, rng.next(), rec + 1);
  }
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
    if (!out) throw SystemError("cannot write synthetic CIFAR-10 file '" + tmp.string() + "'");
  }
  fs::rename(tmp, path);
}

}  // namespace

void synthetic_image(int label, std::uint64_t seed, std::uint8_t* out) {
  Rng rng{seed};
  const int cy = 16 + rng.uniform(7) - 3;
  const int cx = 16 + rng.uniform(7) - 3;
  const int bg = 40 + rng.uniform(60);
  const std::uint8_t* colour = kPalette[label % kCifarClasses];
  constexpr int kPlane = kCifarImageSize * kCifarImageSize;
  for (int y = 0; y < kCifarImageSize; ++y) {
    for (int x = 0; x < kCifarImageSize; ++x) {
      const bool on = in_shape(label, y, x, cy, cx);
      for (int c = 0; c < kCifarChannels; ++c) {
        const int base = on ? colour[c] : bg;
        const int v = base + rng.uniform(41) - 20;
        out[c * kPlane + y * kCifarImageSize + x] = static_cast<std::uint8_t>(std::clamp(v, 0, 255));
      }
    }
  }
}

void write_synthetic_cifar10(const std::string& dir, int n_train, int n_test,
                             std::uint64_t seed) {
  if (n_train < 0 || n_test < 0) {
    throw InvalidArgument("synthetic CIFAR-10 needs non-negative image counts, got " +
                          std::to_string(n_train) + " and " + std::to_string(n_test));
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw SystemError("cannot create data folder '" + dir + "': " + ec.message());
  const auto& files = cifar10_train_files();
  const int parts = static_cast<int>(files.size());
  int first = 0;
  for (int b = 0; b < parts; ++b) {
    const int n = n_train / parts + (b < n_train % parts ? 1 : 0);
    write_file(fs::path(dir) / files[static_cast<std::size_t>(b)], first, n, seed);
    first += n;
  }
  // Test images use a disjoint stream of seeds.
  write_file(fs::path(dir) / cifar10_test_file(), 1 << 30, n_test, seed);
}

}  // namespace batchai::train
