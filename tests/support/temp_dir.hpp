// Temporary folders for tests: a fresh, private folder under the system's temporary directory,
// removed with everything in it when the owner goes, and a scoped environment variable so a test
// that points BATCHAI_HOME (or HOME) at such a folder leaves the process as it found it.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

namespace batchai::test {

// A fresh folder `<tmp>/<prefix>-XXXXXX` (mode 0700, as mkdtemp makes it); the caller removes it.
// Throws std::runtime_error when it cannot be made.
std::filesystem::path make_temp_dir(const std::string& prefix);

// A fresh temporary folder that is removed, with all it holds, when this object goes.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "batchai-test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::filesystem::path& child) const { return path_ / child; }

 private:
  std::filesystem::path path_;
};

// Sets (or, with nullopt, unsets) one environment variable for this object's lifetime and then
// puts back what was there before.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::optional<std::string>& value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> saved_;
};

}  // namespace batchai::test
