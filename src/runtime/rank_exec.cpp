// The per-rank wrapper behind `batchai _rank-exec`: puts an MPI rank into its node's folder and
// environment, then execs the real program so signals and exit codes pass straight through.
#include "batchai/runtime/rank_exec.hpp"

#include <cerrno>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <unistd.h>

#include "batchai/common/errors.hpp"
#include "batchai/common/json_util.hpp"

namespace batchai::runtime {
namespace {

int rank_from_environment() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    if (const char* v = std::getenv(name); v != nullptr && *v != '\0') return std::atoi(v);
  }
  return 0;  // started outside mpirun: behave as rank 0
}

}  // namespace

std::string gpu_for_local_rank(int local_rank, int gpus, const char* visible) {
  std::vector<std::string> ids;
  if (visible != nullptr) {
    std::string list(visible), item;
    for (std::size_t i = 0; i <= list.size(); ++i) {
      if (i == list.size() || list[i] == ',') {
        if (!item.empty()) ids.push_back(item);
        item.clear();
      } else {
        item += list[i];
      }
    }
  }
  if (!ids.empty()) return ids[static_cast<std::size_t>(std::max(0, local_rank)) % ids.size()];
  return std::to_string(std::max(0, local_rank) % std::max(1, gpus));
}

int run_rank_exec(const std::vector<std::string>& args) {
  std::string nodes_file;
  std::vector<std::string> program;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--nodes-file" && i + 1 < args.size()) {
      nodes_file = args[++i];
    } else if (args[i] == "--") {
      program.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    } else {
      std::cerr << "batchai _rank-exec: unexpected argument '" << args[i]
                << "'; usage: _rank-exec --nodes-file <file> -- <program> [args...]\n";
      return 2;
    }
  }
  if (nodes_file.empty() || program.empty()) {
    std::cerr << "batchai _rank-exec: usage: _rank-exec --nodes-file <file> -- <program> [args...]\n";
    return 2;
  }
  Json spec;
  try {
    spec = load_json_file(nodes_file);
  } catch (const Error& e) {
    std::cerr << "batchai _rank-exec: " << e.what() << "\n";
    return 2;
  }
  const int rank = rank_from_environment();
  const int slots = std::max(1, spec.value("slots", 1));
  const auto& nodes = spec.at("nodes");
  if (nodes.empty()) {
    std::cerr << "batchai _rank-exec: " << nodes_file << " lists no nodes\n";
    return 2;
  }
  const std::size_t node = std::min(static_cast<std::size_t>(rank / slots), nodes.size() - 1);
  const int local_rank = rank - static_cast<int>(node) * slots;
  const Json& n = nodes[node];
  for (const auto& [name, value] : n.at("env").items()) ::setenv(name.c_str(), value.get<std::string>().c_str(), 1);
  const int gpus = n.value("gpus", 0);
  if (gpus > 0) ::setenv("CUDA_VISIBLE_DEVICES", gpu_for_local_rank(local_rank, gpus, std::getenv("CUDA_VISIBLE_DEVICES")).c_str(), 1);
  ::setenv("BATCHAI_NODE_ID", n.value("id", std::string()).c_str(), 1);
  ::setenv("BATCHAI_LOCAL_RANK", std::to_string(local_rank).c_str(), 1);
  const std::string cwd = n.value("cwd", std::string());
  if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) {
    std::cerr << "batchai _rank-exec: rank " << rank << " cannot enter " << cwd << ": " << std::strerror(errno) << "\n";
    return 126;
  }
  std::vector<char*> argv;
  for (auto& a : program) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  std::cerr << "batchai _rank-exec: rank " << rank << " cannot run '" << program[0] << "': " << std::strerror(errno)
            << "\n";
  return errno == ENOENT ? 127 : 126;
}

}  // namespace batchai::runtime
