// Fetching CIFAR-10: libcurl download to a .part file, MD5 check, `tar -xzf` into a private
// staging folder, then the six batch files are renamed into place. Any failure removes the
// staging folder and the archive, so the data folder never holds a partial data set.
#include "data/download.hpp"

#include <curl/curl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <vector>

#include "batchai/common/errors.hpp"
#include "data/checksum.hpp"
#include "data/cifar10.hpp"

extern char** environ;

namespace batchai::train {
namespace fs = std::filesystem;

namespace {

std::size_t write_to_file(char* ptr, std::size_t size, std::size_t nmemb, void* user) {
  return std::fwrite(ptr, size, nmemb, static_cast<std::FILE*>(user));
}

// Runs tar without a shell (no quoting problems with odd folder names).
void extract_tar_gz(const fs::path& archive, const fs::path& into) {
  std::vector<std::string> args = {"tar", "-xzf", archive.string(), "-C", into.string()};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, "tar", nullptr, nullptr, argv.data(), environ);
  if (rc != 0) throw SystemError("cannot run 'tar' to extract CIFAR-10: install tar and gzip");
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw SystemError("waiting for 'tar' failed");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw Error("extracting '" + archive.string() + "' with tar failed (exit status " +
                std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                "): the archive is damaged; delete it and download again");
  }
}

// Removes a path on scope exit unless released.
struct Cleanup {
  fs::path path;
  ~Cleanup() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

}  // namespace

void download_file(const std::string& url, const std::string& dest_file) {
  static std::once_flag init;
  std::call_once(init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  const std::string part = dest_file + ".part";
  std::FILE* out = std::fopen(part.c_str(), "wb");
  if (!out) throw SystemError("cannot create '" + part + "' for the download");
  Cleanup remove_part{part};
  CURL* curl = curl_easy_init();
  if (!curl) {
    std::fclose(out);
    throw SystemError("libcurl could not be initialised");
  }
  char error[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &write_to_file);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, out);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(curl, CURLOPT_FAILONERROR, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 30L);
  // Give up on a stalled transfer: under 1 KB/s for 60 s.
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1024L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, 60L);
  const CURLcode rc = curl_easy_perform(curl);
  long http = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &http);
  curl_easy_cleanup(curl);
  const bool closed = std::fclose(out) == 0;
  if (rc != CURLE_OK) {
    throw SystemError("downloading " + url + " failed: " +
                      (error[0] ? std::string(error) : curl_easy_strerror(rc)) +
                      (http >= 400 ? " (HTTP " + std::to_string(http) + ")" : "") +
                      "; check the network or download the file yourself");
  }
  if (!closed) throw SystemError("writing '" + part + "' failed (disk full?)");
  fs::rename(part, dest_file);
  remove_part.path.clear();
}

void download_cifar10(const std::string& dir, const DownloadSource& source) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw SystemError("cannot create data folder '" + dir + "': " + ec.message());
  const fs::path staging = fs::path(dir) / (".cifar10-download-" + std::to_string(::getpid()));
  fs::remove_all(staging, ec);
  fs::create_directories(staging);
  Cleanup remove_staging{staging};

  const fs::path archive = staging / "cifar-10-binary.tar.gz";
  download_file(source.url, archive.string());
  if (!source.md5.empty()) {
    const std::string got = md5_file_hex(archive.string());
    if (got != source.md5) {
      throw Error("checksum mismatch for " + source.url + ": MD5 is " + got + ", expected " +
                  source.md5 + "; the download is corrupt or not the CIFAR-10 binary archive. "
                  "Nothing was written to '" + dir + "'; try again");
    }
  }
  const fs::path extracted = staging / "x";
  fs::create_directories(extracted);
  extract_tar_gz(archive, extracted);
  // The official archive nests the files in cifar-10-batches-bin/; accept a flat one too.
  fs::path src = extracted / "cifar-10-batches-bin";
  if (!fs::is_directory(src)) src = extracted;
  if (!has_cifar10(src.string())) {
    throw Error("the archive from " + source.url + " does not contain the CIFAR-10 binary "
                "batches (data_batch_1.bin .. data_batch_5.bin, test_batch.bin); nothing was "
                "written to '" + dir + "'");
  }
  std::vector<std::string> files = cifar10_train_files();
  files.push_back(cifar10_test_file());
  for (const auto& f : files) load_cifar10_file((src / f).string());  // validates sizes, labels
  // Same file system, so each rename is atomic; the test file goes last because has_cifar10
  // requires all six.
  for (const auto& f : files) fs::rename(src / f, fs::path(dir) / f);
}

std::string ensure_cifar10(const std::string& dir, bool allow_download,
                           const DownloadSource& source) {
  if (has_cifar10(dir)) return dir;
  const char* env = std::getenv(kCifar10DirEnv);
  if (env && *env && has_cifar10(env)) return env;
  if (allow_download && !dir.empty()) {
    download_cifar10(dir, source);
    return dir;
  }
  throw NotFound("CIFAR-10 not found in '" + dir + "'" +
                 (env && *env ? " nor in $" + std::string(kCifar10DirEnv) + "='" + env + "'" : "") +
                 ": expected data_batch_1.bin .. data_batch_5.bin and test_batch.bin. Download " +
                 kCifar10Url + " and extract its cifar-10-batches-bin/ files there (or pass "
                 "--data-dir, or set " + kCifar10DirEnv + ", or allow downloading)");
}

}  // namespace batchai::train
