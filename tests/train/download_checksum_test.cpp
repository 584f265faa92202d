// MD5 / SHA-256 against the RFC 1321 and FIPS 180 test vectors, and the CIFAR-10 download
// path end to end on a local tar.gz served through a file:// URL.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "batchai/common/errors.hpp"
#include "data/checksum.hpp"
#include "data/cifar10.hpp"
#include "data/download.hpp"
#include "data/synthetic_cifar10.hpp"
#include "support/temp_dir.hpp"

namespace batchai::train {
namespace {
namespace fs = std::filesystem;

TEST(Checksum, Md5MatchesRfc1321Vectors) {
  EXPECT_EQ(md5_hex(""), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(md5_hex("a"), "0cc175b9c0f1b6a831c399e269772661");
  EXPECT_EQ(md5_hex("abc"), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(md5_hex("message digest"), "f96b697d7cb7938d525a2f31aaf161d0");
  EXPECT_EQ(md5_hex("abcdefghijklmnopqrstuvwxyz"), "c3fcd3d76192e4007dfb496cca67e13b");
  EXPECT_EQ(md5_hex("12345678901234567890123456789012345678901234567890123456789012345678901234567890"),
            "57edf4a22be3c955ac49da2e2107b67a");
}

TEST(Checksum, Sha256MatchesNistVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Checksum, StreamingInPiecesEqualsOneShot) {
  std::string data;
  for (int i = 0; i < 1000; ++i) data += static_cast<char>(i * 7);
  for (std::size_t piece : {1u, 3u, 63u, 64u, 65u, 500u}) {
    Md5 md5;
    Sha256 sha;
    for (std::size_t off = 0; off < data.size(); off += piece) {
      const std::size_t n = std::min(piece, data.size() - off);
      md5.update(data.data() + off, n);
      sha.update(data.data() + off, n);
    }
    const auto m = md5.finish();
    const auto s = sha.finish();
    EXPECT_EQ(to_hex(m.data(), m.size()), md5_hex(data)) << piece;
    EXPECT_EQ(to_hex(s.data(), s.size()), sha256_hex(data)) << piece;
  }
}

class DownloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A tar.gz laid out like the official one: cifar-10-batches-bin/<six files>.
    const fs::path src = root_ / "src" / "cifar-10-batches-bin";
    write_synthetic_cifar10(src.string(), 50, 20, 7);
    archive_ = root_ / "cifar-10-binary.tar.gz";
    const std::string cmd = "tar -czf '" + archive_.string() + "' -C '" +
                            (root_ / "src").string() + "' cifar-10-batches-bin";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    source_.url = "file://" + archive_.string();
    source_.md5 = md5_file_hex(archive_.string());
  }

  test::TempDir tmp_{"batchai-download-test"};
  fs::path root_ = tmp_.path();
  fs::path archive_;
  DownloadSource source_;
};

TEST_F(DownloadTest, DownloadsVerifiesAndExtractsIntoTheDataDir) {
  const fs::path data = root_ / "data";
  EXPECT_EQ(ensure_cifar10(data.string(), true, source_), data.string());
  ASSERT_TRUE(has_cifar10(data.string()));
  EXPECT_EQ(load_cifar10_train(data.string()).count, 50);
  EXPECT_EQ(load_cifar10_test(data.string()).count, 20);
  // Only the six batch files are left: no archive, no staging folder.
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(data)) ++entries;
  EXPECT_EQ(entries, 6);
}

TEST_F(DownloadTest, WrongChecksumFailsClearlyAndLeavesNoData) {
  const fs::path data = root_ / "data";
  source_.md5 = "00000000000000000000000000000000";
  try {
    download_cifar10(data.string(), source_);
    FAIL() << "expected a checksum error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("checksum mismatch"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(source_.md5), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_empty(data));
}

TEST_F(DownloadTest, MissingUrlFailsWithCurlMessage) {
  const fs::path data = root_ / "data";
  source_.url = "file://" + (root_ / "nope.tar.gz").string();
  EXPECT_THROW(download_cifar10(data.string(), source_), SystemError);
  EXPECT_TRUE(fs::is_empty(data));
}

TEST_F(DownloadTest, NotAnArchiveFailsAndLeavesNoData) {
  const fs::path bogus = root_ / "bogus.tar.gz";
  std::ofstream(bogus) << "not a tarball";
  source_.url = "file://" + bogus.string();
  source_.md5 = md5_file_hex(bogus.string());
  const fs::path data = root_ / "data";
  EXPECT_THROW(download_cifar10(data.string(), source_), Error);
  EXPECT_TRUE(fs::is_empty(data));
}

TEST_F(DownloadTest, MissingDataWithoutDownloadSaysHowToGetIt) {
  ::unsetenv(kCifar10DirEnv);
  try {
    ensure_cifar10((root_ / "empty").string(), false, source_);
    FAIL() << "expected NotFound";
  } catch (const NotFound& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("data_batch_1.bin"), std::string::npos) << msg;
    EXPECT_NE(msg.find("https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz"), std::string::npos);
    EXPECT_NE(msg.find("--data-dir"), std::string::npos);
    EXPECT_NE(msg.find("BATCHAI_CIFAR10_DIR"), std::string::npos);
  }
}

TEST_F(DownloadTest, EnvironmentVariableNamesAnotherDataDir) {
  const fs::path src = root_ / "src" / "cifar-10-batches-bin";
  ::setenv(kCifar10DirEnv, src.c_str(), 1);
  EXPECT_EQ(ensure_cifar10((root_ / "empty").string(), false, source_), src.string());
  ::unsetenv(kCifar10DirEnv);
}

}  // namespace
}  // namespace batchai::train
