// Times JMESPath compile+evaluate (and compile alone) for every case of the compliance suite's
// benchmarks.json. Prints a table, or JSON lines with --json for compare_python.py.
// Usage: query_bench [--json] [--suite DIR] [--target-ms N]
#include <algorithm>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "batchai/query/jmespath.hpp"

namespace {

using batchai::query::Expression;
using batchai::query::Json;
// Process CPU time, not wall time: the figures stay comparable on a busy machine (the same
// clock compare_python.py uses through time.process_time_ns()).
struct Clock {
  static double now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
  }
};

volatile std::size_t g_sink = 0;  // keeps results observable so nothing is optimised away

std::filesystem::path default_suite() {
  if (const char* env = std::getenv("BATCHAI_JMESPATH_COMPLIANCE_DIR"); env != nullptr && *env != '\0') return env;
  return BATCHAI_SOURCE_DIR "/../shared/reference/jmespath-compliance";
}

// Best-of-5 nanoseconds per call of `fn`, each batch sized to take about target_ms.
template <typename Fn>
double time_ns(Fn&& fn, double target_ms) {
  std::size_t n = 1;
  while (true) {  // calibrate
    const double t0 = Clock::now_ns();
    for (std::size_t i = 0; i < n; ++i) fn();
    const double ms = (Clock::now_ns() - t0) / 1e6;
    if (ms >= target_ms / 4 || n >= (1U << 26U)) {
      n = std::max<std::size_t>(1, static_cast<std::size_t>(static_cast<double>(n) * target_ms / std::max(ms, 1e-3)));
      break;
    }
    n *= 4;
  }
  double best = 1e300;
  for (int batch = 0; batch < 5; ++batch) {
    const double t0 = Clock::now_ns();
    for (std::size_t i = 0; i < n; ++i) fn();
    const double ns = (Clock::now_ns() - t0) / static_cast<double>(n);
    best = std::min(best, ns);
  }
  return best;
}

std::string json_string(const std::string& s) { return Json(s).dump(); }

// The synthetic job list of cli_cases.json; compare_python.py builds the same one.
Json make_resources(int count) {
  static const char* kStates[] = {"queued", "running", "succeeded"};
  Json list = Json::array();
  for (int i = 0; i < count; ++i) {
    const std::string name = "job" + std::to_string(i);
    list.push_back({{"id", "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/"
                           "Microsoft.BatchAI/workspaces/ws/experiments/exp/jobs/" + name},
                    {"name", name},
                    {"type", "Microsoft.BatchAI/workspaces/experiments/jobs"},
                    {"executionState", kStates[i % 3]},
                    {"priority", i % 7},
                    {"properties", {{"nodeCount", i % 4 + 1},
                                    {"provisioningState", "succeeded"},
                                    {"executionInfo", {{"exitCode", i % 2}, {"errors", Json::array()}}}}}});
  }
  return list;
}

void report(bool json_output, const std::string& comment, const std::string& expression, const std::string& bench,
            double full_ns, double parse_ns) {
  if (json_output) {
    std::printf("{\"comment\":%s,\"expression\":%s,\"bench\":%s,\"full_ns\":%.1f,\"parse_ns\":%.1f}\n",
                json_string(comment).c_str(), json_string(expression).c_str(), json_string(bench).c_str(), full_ns,
                parse_ns);
  } else {
    std::printf("%-36s %-6s %14.1f %14.1f\n", comment.substr(0, 36).c_str(), bench.c_str(), full_ns, parse_ns);
  }
}

void run_case(bool json_output, const Json& given, const std::string& comment, const std::string& expression,
              const std::string& bench, double target_ms) {
  const double full_ns =
      time_ns([&] { g_sink = g_sink + Expression::compile(expression).evaluate(given).size(); }, target_ms);
  const double parse_ns = time_ns([&] { g_sink = g_sink + (Expression::compile(expression), 1U); }, target_ms);
  report(json_output, comment, expression, bench, full_ns, parse_ns);
}

}  // namespace

int main(int argc, char** argv) {
  bool json_output = false;
  std::filesystem::path suite = default_suite();
  double target_ms = 20;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json") {
      json_output = true;
    } else if (arg == "--suite" && i + 1 < argc) {
      suite = argv[++i];
    } else if (arg == "--target-ms" && i + 1 < argc) {
      target_ms = std::atof(argv[++i]);
    } else {
      std::cerr << "usage: query_bench [--json] [--suite DIR] [--target-ms N]\n";
      return 2;
    }
  }
  const auto file = suite / "benchmarks.json";
  std::ifstream in(file);
  if (!in) {
    std::cerr << "query_bench: cannot open " << file
              << "; pass --suite DIR or set BATCHAI_JMESPATH_COMPLIANCE_DIR to the compliance suite folder\n";
    return 1;
  }
  const Json groups = Json::parse(in);
  if (!json_output) std::printf("%-36s %-6s %14s %14s\n", "case", "bench", "compile+eval ns", "compile ns");
  for (const auto& group : groups) {
    const Json& given = group.at("given");
    for (const auto& test : group.at("cases")) {
      const std::string expression = test.at("expression").get<std::string>();
      run_case(json_output, given, test.value("comment", expression), expression, test.value("bench", "full"),
               target_ms);
    }
  }
  // CLI-shaped cases: --query over a list of 10,000 resources.
  std::ifstream cli_in(BATCHAI_SOURCE_DIR "/bench/query/cli_cases.json");
  if (!cli_in) {
    std::cerr << "query_bench: tests/bench/query/cli_cases.json not found; skipping the CLI-shaped cases\n";
    return 0;
  }
  const Json cli = Json::parse(cli_in);
  const Json resources = make_resources(cli.at("resources").get<int>());
  for (const auto& test : cli.at("cases")) {
    const std::string expression = test.at("expression").get<std::string>();
    run_case(json_output, resources, test.at("comment").get<std::string>(), expression, "cli", target_ms);
  }
  return 0;
}
