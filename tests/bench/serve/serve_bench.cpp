// serve_bench (issue 16, "Measure"): requests per second of `batchai serve` for
// `GET …/jobs/{name}` and `GET …/jobs` (every job of one experiment) from concurrent keep-alive
// clients, side by side in one run with the CLI's `job show` / `job list -o json` latency, over
// one temporary home holding N real jobs (stored through the control plane's Jobs::create; with
// no process launcher their supervisors cannot start, so each ends `failed` when it heads the
// queue, as a job whose supervisor failed to start does; its document is the full job document
// all the same).
// Usage: serve_bench --exe <batchai> [--jobs 1000] [--clients 8] [--seconds 5] [--cli-runs 21]
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "batchai/common/clock.hpp"
#include "batchai/common/ids.hpp"
#include "batchai/common/json_util.hpp"
#include "batchai/common/process.hpp"
#include "batchai/control_plane/control_plane.hpp"

namespace {

namespace fs = std::filesystem;
namespace cp = batchai::control_plane;
using Clock = std::chrono::steady_clock;
using batchai::Json;

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "serve_bench: %s\n", why.c_str());
  std::exit(1);
}

struct Options {
  std::string exe;
  int jobs = 1000;
  int clients = 8;
  double seconds = 5;
  int cli_runs = 21;
};

// Bounded integer/number options: a bench fed nonsense says so instead of running for ever.
Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) die("missing value after " + a);
    const std::string v = argv[++i];
    char* end = nullptr;
    const double n = std::strtod(v.c_str(), &end);
    const bool number = end != v.c_str() && *end == '\0';
    if (a == "--exe") o.exe = v;
    else if (a == "--jobs" && number && n >= 1 && n <= 100000) o.jobs = static_cast<int>(n);
    else if (a == "--clients" && number && n >= 1 && n <= 64) o.clients = static_cast<int>(n);
    else if (a == "--seconds" && number && n > 0 && n <= 600) o.seconds = n;
    else if (a == "--cli-runs" && number && n >= 1 && n <= 1001) o.cli_runs = static_cast<int>(n);
    else die("bad option " + a + " " + v + " (usage: --exe B [--jobs 1..100000] [--clients 1..64] "
             "[--seconds >0..600] [--cli-runs 1..1001])");
  }
  if (o.exe.empty()) die("--exe <batchai> is required");
  return o;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The word after `flag ` in `text` ("" when absent).
std::string word_after(const std::string& text, const std::string& flag) {
  const auto at = text.find(flag + " ");
  if (at == std::string::npos) return "";
  const auto start = at + flag.size() + 1;
  return text.substr(start, text.find_first_of(" \n", start) - start);
}

// The home: a group, a workspace, an experiment, a 0-node cluster (made by the CLI, as users
// do), then the jobs through the control plane in this process (one store, no launches).
void seed(const Options& o, const fs::path& home) {
  auto launcher = batchai::make_posix_process_launcher();
  auto run = [&](std::vector<std::string> args) {
    batchai::ProcessSpec spec;
    spec.argv = {o.exe};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.stdout_file = home / "seed.out";
    spec.stderr_file = home / "seed.out";
    if (launcher->run(spec).exit_code != 0) die(args[0] + " " + args[1] + " failed: " + read_file(home / "seed.out"));
  };
  run({"group", "create", "-n", "rg", "-l", "eastus"});
  run({"workspace", "create", "-g", "rg", "-n", "ws", "-l", "eastus"});
  run({"experiment", "create", "-g", "rg", "-w", "ws", "-n", "exp"});
  run({"cluster", "create", "-g", "rg", "-w", "ws", "-n", "c", "-s", "Standard_D1", "-t", "0", "-u", "u", "-p", "Secret.123"});
  const fs::path job_file = home / "job.json";
  std::ofstream(job_file) << R"({"properties":{"nodeCount":1,"stdOutErrPathPrefix":"$AZ_BATCHAI_JOB_MOUNT_ROOT",)"
                          << R"("customToolkitSettings":{"commandLine":"true"}}})";
  auto plane = cp::ControlPlane::open(cp::Settings::from_environment(), batchai::make_process_clock());
  const auto start = Clock::now();
  for (int i = 0; i < o.jobs; ++i) {
    cp::JobCreateOptions job;
    job.where = {"rg", "ws"};
    job.experiment = "exp";
    job.name = "job" + std::to_string(i);
    job.config = batchai::load_json_file(job_file);
    job.cluster = "c";
    plane->jobs().create(job);
  }
  std::fprintf(stderr, "seeded %d jobs in %.1f s\n", o.jobs, std::chrono::duration<double>(Clock::now() - start).count());
}

// `batchai serve --port 0` on the home, its port and credentials read from what it prints.
struct Served {
  pid_t pid = -1;
  int port = 0;
  std::string client_id, secret;
};

Served start_server(const Options& o, const fs::path& home, batchai::ProcessLauncher& launcher) {
  batchai::ProcessSpec spec;
  spec.argv = {o.exe, "serve", "--port", "0"};
  spec.stdout_file = home / "serve.out";
  spec.stderr_file = home / "serve.err";
  Served s;
  s.pid = launcher.spawn(spec);
  std::string out;
  for (int i = 0; i < 200 && std::count(out.begin(), out.end(), '\n') < 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    out = read_file(home / "serve.out");
  }
  const auto at = out.find("https://localhost:");
  if (at == std::string::npos) die("batchai serve printed no port: " + out + read_file(home / "serve.err"));
  s.port = std::atoi(out.c_str() + at + 18);
  const std::string login = out.substr(std::min(out.find("az login"), out.size()));
  s.client_id = word_after(login, "-u");
  s.secret = word_after(login, "-p");
  if (s.port <= 0 || s.port > 65535 || s.client_id.empty() || s.secret.empty()) die("cannot read: " + out);
  return s;
}

std::unique_ptr<httplib::SSLClient> make_client(int port, const fs::path& cert) {
  auto c = std::make_unique<httplib::SSLClient>("localhost", port);
  c->set_ca_cert_path(cert.c_str());
  c->enable_server_certificate_verification(true);
  c->set_keep_alive(true);
  c->set_tcp_nodelay(true);  // as requests (urllib3) and az set it
  c->set_read_timeout(60, 0);
  return c;
}

struct Figures {
  double rps = 0;
  double median_ms = 0;
  long requests = 0;
  std::size_t items = 0;  // list length seen (jobs)
};

// `clients` threads, each with its own keep-alive connection, GET `path` (and the nextLinks of
// its answers) until `seconds` have passed; every answer must be 200.
Figures measure(const Options& o, int port, const fs::path& cert, const std::string& bearer, const std::string& path) {
  std::mutex mu;
  std::vector<double> latencies;
  std::atomic<long> failures{0};
  std::atomic<std::size_t> items{0};
  const httplib::Headers headers{{"Authorization", bearer}};
  const std::string base = "https://localhost:" + std::to_string(port);
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
  std::vector<std::thread> threads;
  for (int t = 0; t < o.clients; ++t)
    threads.emplace_back([&] {
      auto c = make_client(port, cert);
      std::vector<double> mine;
      do {
        const auto t0 = Clock::now();
        std::string next = path;
        std::size_t seen = 0;
        while (!next.empty()) {
          auto r = c->Get(next.c_str(), headers);
          if (!r || r->status != 200) {
            ++failures;
            break;
          }
          next.clear();
          // Parsed once per client (the count) and where it pages: the clients share the
          // server's cores, and parsing every 1,000-job answer would measure the client.
          if (!mine.empty() && r->body.find("\"nextLink\"") == std::string::npos) continue;
          Json body = Json::parse(r->body, nullptr, false);
          if (body.is_object() && body.contains("value")) {
            seen += body["value"].size();
            const std::string link = body.value("nextLink", "");
            if (link.rfind(base, 0) == 0) next = link.substr(base.size());
          }
        }
        if (mine.empty()) items = seen;
        mine.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      } while (Clock::now() < deadline);
      std::lock_guard<std::mutex> lock(mu);
      latencies.insert(latencies.end(), mine.begin(), mine.end());
    });
  for (auto& t : threads) t.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  if (failures > 0) die(std::to_string(failures.load()) + " requests of GET " + path + " failed");
  return {static_cast<double>(latencies.size()) / elapsed, median(latencies), static_cast<long>(latencies.size()), items};
}

// Median wall time (ms) of `batchai <args>` with its output thrown away; it must exit 0.
double cli_median_ms(const Options& o, batchai::ProcessLauncher& launcher, std::vector<std::string> args) {
  batchai::ProcessSpec spec;
  spec.argv = {o.exe};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.stdout_file = "/dev/null";
  spec.stderr_file = "/dev/null";
  std::vector<double> times;
  for (int i = 0; i < o.cli_runs; ++i) {
    const auto t0 = Clock::now();
    if (launcher.run(spec).exit_code != 0) die("batchai " + args[0] + " " + args[1] + " failed");
    times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return median(times);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  std::string templ = (fs::temp_directory_path() / "batchai-serve-bench-XXXXXX").string();
  if (::mkdtemp(templ.data()) == nullptr) die("mkdtemp failed");
  const fs::path home = templ;
  ::setenv("BATCHAI_HOME", home.c_str(), 1);
  ::setenv("BATCHAI_SIM_DELAY_S", "0", 1);
  auto launcher = batchai::make_posix_process_launcher();
  seed(o, home);

  Served served = start_server(o, home, *launcher);
  const fs::path cert = home / "serve" / "cert.pem";
  auto c = make_client(served.port, cert);
  auto token = c->Post("/adfs/oauth2/token",
                       "grant_type=client_credentials&client_id=" + served.client_id + "&client_secret=" + served.secret +
                           "&scope=https%3A%2F%2Fmanagement.azure.com%2F.default",
                       "application/x-www-form-urlencoded");
  if (!token || token->status != 200) die("no token from the server");
  const std::string bearer = "Bearer " + Json::parse(token->body)["access_token"].get<std::string>();
  const std::string jobs = "/subscriptions/" + batchai::subscription_id() +
                           "/resourceGroups/rg/providers/Microsoft.BatchAI/workspaces/ws/experiments/exp/jobs";
  const std::string middle = "job" + std::to_string(o.jobs / 2);
  const Figures show = measure(o, served.port, cert, bearer, jobs + "/" + middle + "?api-version=2018-05-01");
  const Figures list = measure(o, served.port, cert, bearer, jobs + "?api-version=2018-05-01");
  launcher->signal_group(served.pid, SIGTERM);
  const auto exit = launcher->wait(served.pid, std::chrono::seconds(20));

  const std::vector<std::string> scope = {"-g", "rg", "-w", "ws", "-e", "exp"};
  auto with = [&](std::vector<std::string> head, std::vector<std::string> tail) {
    head.insert(head.end(), scope.begin(), scope.end());
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  const double cli_show = cli_median_ms(o, *launcher, with({"job", "show"}, {"-n", middle}));
  const double cli_list = cli_median_ms(o, *launcher, with({"job", "list"}, {"-o", "json"}));

  std::printf("jobs in store: %d (list answers held %zu); %d clients, %.1f s per endpoint; CLI median of %d runs\n",
              o.jobs, list.items, o.clients, o.seconds, o.cli_runs);
  // Ratios: latency (CLI median / serve median, the serve side under `clients` concurrent
  // requests) and throughput (serve rps / the CLI's runs per second, one after another).
  std::printf("%-28s %10s %13s %11s %13s %11s\n", "operation", "serve rps", "serve med ms", "CLI med ms",
              "latency x", "rps x");
  for (const auto& [name, f, cli] : {std::tuple{"GET jobs/{name} | job show", show, cli_show},
                                     std::tuple{"GET jobs | job list -o json", list, cli_list}})
    std::printf("%-28s %10.1f %13.2f %11.2f %13.1f %11.1f\n", name, f.rps, f.median_ms, cli, cli / f.median_ms,
                f.rps * cli / 1000.0);
  std::error_code ec;
  fs::remove_all(home, ec);
  if (list.items != static_cast<std::size_t>(o.jobs)) die("the list held " + std::to_string(list.items) + " jobs");
  if (!exit || exit->exit_code != 0) die("batchai serve did not exit 0 on SIGTERM");
  return 0;
}
