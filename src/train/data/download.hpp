// Finding CIFAR-10 on disk or fetching the official archive: download with libcurl, verify
// the MD5, extract with tar into the data folder (all or nothing: a failure leaves no files).
#pragma once
#include <string>

namespace batchai::train {

constexpr const char* kCifar10Url = "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz";
constexpr const char* kCifar10Md5 = "c32a1d4ab5d03f1284b67883e8d87530";
constexpr const char* kCifar10DirEnv = "BATCHAI_CIFAR10_DIR";

struct DownloadSource {
  std::string url = kCifar10Url;  // http(s):// or file://
  std::string md5 = kCifar10Md5;  // expected MD5 of the archive (lower-case hex); "" = skip
};

// Fetches `url` into `dest_file` (written as dest_file + ".part", renamed when complete).
// Throws SystemError saying what failed (HTTP status, curl message).
void download_file(const std::string& url, const std::string& dest_file);

// Downloads the archive, checks its MD5 and extracts the six batch files straight into `dir`
// (the archive's cifar-10-batches-bin/ folder is flattened). On any failure nothing new is
// left in `dir` and batchai::Error explains what happened.
void download_cifar10(const std::string& dir, const DownloadSource& source = {});

// Returns the folder that holds CIFAR-10: `dir` when it has the files, else $BATCHAI_CIFAR10_DIR
// when set and complete, else (allow_download) downloads into `dir`; otherwise throws NotFound
// naming the expected files, the URL, --data-dir and BATCHAI_CIFAR10_DIR. With several ranks,
// call it on rank 0 first, barrier, then on the others (concurrent downloads are safe but waste
// bandwidth).
std::string ensure_cifar10(const std::string& dir, bool allow_download,
                           const DownloadSource& source = {});

}  // namespace batchai::train
