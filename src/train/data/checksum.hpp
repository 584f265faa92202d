// Small self-contained MD5 and SHA-256 (RFC 1321, FIPS 180-4) used to verify the downloaded
// CIFAR-10 archive and to detect torn checkpoint files. Streaming, so large files need no copy.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace batchai::train {

class Md5 {
 public:
  Md5();
  void update(const void* data, std::size_t size);
  std::array<std::uint8_t, 16> finish();  // the object must not be updated afterwards

 private:
  void block(const std::uint8_t* p);
  std::array<std::uint32_t, 4> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::uint64_t length_ = 0;  // bytes seen
};

class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t size);
  std::array<std::uint8_t, 32> finish();

 private:
  void block(const std::uint8_t* p);
  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::uint64_t length_ = 0;
};

// Lower-case hex of a digest.
std::string to_hex(const std::uint8_t* bytes, std::size_t size);
std::string md5_hex(std::string_view data);
std::string sha256_hex(std::string_view data);
// Digest of a whole file; throws batchai::NotFound when it cannot be opened.
std::string md5_file_hex(const std::string& path);

}  // namespace batchai::train
