// Runs the built `batchai` executable (BATCHAI_EXE) against a temporary BATCHAI_HOME with
// BATCHAI_SIM_DELAY_S=0, capturing exit code, stdout and stderr; helpers for JSON checks.
#pragma once
#include <sys/types.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/temp_dir.hpp"

namespace batchai::cli::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
  nlohmann::json json() const;  // stdout parsed as JSON (test failure if it is not)
};

class CliHarness {
 public:
  CliHarness();
  CliHarness(const CliHarness&) = delete;
  CliHarness& operator=(const CliHarness&) = delete;

  // Runs `batchai <args>`; `env` adds to the clean test environment.
  CliResult run(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {}) const;
  // Runs `batchai <args>` on a pseudo-terminal (through script(1)) with `input` typed on stdin;
  // stdout and stderr arrive together in `out`.
  CliResult run_in_pty(const std::vector<std::string>& args, const std::string& input) const;
  // Starts `batchai <args>` with output discarded; returns its pid (for concurrency/kill tests).
  pid_t spawn(const std::vector<std::string>& args) const;
  // Waits for a spawned process; its exit code, or 128 + signal.
  static int wait(pid_t pid);

  const std::filesystem::path& home() const { return home_; }
  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path write_file(const std::string& name, const std::string& content) const;

 private:
  std::vector<std::string> environment(const std::map<std::string, std::string>& extra) const;
  test::TempDir tmp_{"batchai-cli"};
  std::filesystem::path dir_ = tmp_.path();   // temporary root
  std::filesystem::path home_ = dir_ / "home";  // BATCHAI_HOME
};

// Replaces timestamps (keys ending in "Time"/"time"), uuids and generated keys by placeholders
// so documents can be compared with expected ones.
nlohmann::json normalise(nlohmann::json doc);

}  // namespace batchai::cli::testing
