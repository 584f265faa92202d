// A sandbox for the hostile-input sweep: a temporary folder holding BATCHAI_HOME, a decoy tree
// beside it whose digest must never change, inputs, and a runner for the built `batchai` that
// bounds every command in time (a command that blocks is a finding, not a hung test).
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "support/temp_dir.hpp"

namespace batchai::sweep {

struct Outcome {
  int code = -1;           // exit code, or 128 + signal
  bool timed_out = false;  // killed by the sandbox after the time limit
  std::string out;
  std::string err;
};

class Sandbox {
 public:
  // The text every decoy file holds: found in an answer or a download means something leaked.
  static constexpr const char* kSecret = "DECOY-SECRET-7f3a";

  Sandbox();
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  // Runs `batchai <args>` in its own process group; killed (whole group) after `limit`.
  Outcome run(const std::vector<std::string>& args, std::chrono::seconds limit = std::chrono::seconds(20),
              const std::map<std::string, std::string>& env = {}) const;

  // A digest of the decoy tree: names, types, modes, sizes, link targets, contents and mtimes.
  std::uint64_t decoy_digest() const;
  // Pids of processes (other than this one) whose command line or environment names the sandbox.
  std::vector<int> leftover_processes() const;

  const std::filesystem::path& root() const { return root_; }
  const std::filesystem::path& home() const { return home_; }
  const std::filesystem::path& decoy() const { return decoy_; }
  const std::filesystem::path& inputs() const { return inputs_; }
  std::filesystem::path write_input(const std::string& name, const std::string& content) const;

 private:
  test::TempDir tmp_{"batchai-sweep"};
  std::filesystem::path root_ = tmp_.path();
  std::filesystem::path home_;
  std::filesystem::path decoy_;
  std::filesystem::path inputs_;
};

}  // namespace batchai::sweep
