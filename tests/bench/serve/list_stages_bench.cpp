// list_stages_bench (issue 24, "Measure"): where the time of one `GET …/jobs` over N jobs goes,
// stage by stage, in one process and without HTTP: the reconcile every entry point runs, the
// control plane's list (SQLite read + parse of each stored document), the wire conversion, the
// serialisation, and the server's paged path (Jobs::list_page + the page renderer) end to end.
// Usage: list_stages_bench --exe <batchai> [--jobs 1000] [--runs 50]
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "batchai/common/clock.hpp"
#include "batchai/common/process.hpp"
#include "batchai/control_plane/control_plane.hpp"
#include "arm/wire.hpp"  // src/serve, through batchai::serve_internals

namespace {

namespace fs = std::filesystem;
namespace cp = batchai::control_plane;
using Clock = std::chrono::steady_clock;
using batchai::Json;

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "list_stages_bench: %s\n", why.c_str());
  std::exit(1);
}

// The median wall time (ms) of `runs` calls of `f`.
double median_ms(int runs, const std::function<void()>& f) {
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = Clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void seed(const std::string& exe, const fs::path& home, cp::ControlPlane& plane, int jobs) {
  auto launcher = batchai::make_posix_process_launcher();
  auto run = [&](std::vector<std::string> args) {
    batchai::ProcessSpec spec;
    spec.argv = {exe};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.stdout_file = home / "seed.out";
    spec.stderr_file = home / "seed.out";
    if (launcher->run(spec).exit_code != 0) die(args[0] + " " + args[1] + " failed");
  };
  run({"group", "create", "-n", "rg", "-l", "eastus"});
  run({"workspace", "create", "-g", "rg", "-n", "ws", "-l", "eastus"});
  run({"experiment", "create", "-g", "rg", "-w", "ws", "-n", "exp"});
  run({"cluster", "create", "-g", "rg", "-w", "ws", "-n", "c", "-s", "Standard_D1", "-t", "0", "-u", "u", "-p", "Secret.123"});
  const fs::path job_file = home / "job.json";
  std::ofstream(job_file) << R"({"properties":{"nodeCount":1,"stdOutErrPathPrefix":"$AZ_BATCHAI_JOB_MOUNT_ROOT",)"
                          << R"("customToolkitSettings":{"commandLine":"true"}}})";
  for (int i = 0; i < jobs; ++i) {
    cp::JobCreateOptions job;
    job.where = {"rg", "ws"};
    job.experiment = "exp";
    job.name = "job" + std::to_string(i);
    job.config = batchai::load_json_file(job_file);
    job.cluster = "c";
    plane.jobs().create(job);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string exe;
  int jobs = 1000, runs = 50;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--exe") exe = v;
    else if (a == "--jobs") jobs = std::clamp(std::atoi(v.c_str()), 1, 100000);
    else if (a == "--runs") runs = std::clamp(std::atoi(v.c_str()), 1, 10000);
    else die("usage: --exe B [--jobs N] [--runs N]");
  }
  if (exe.empty()) die("--exe <batchai> is required");
  std::string templ = (fs::temp_directory_path() / "batchai-list-stages-XXXXXX").string();
  if (::mkdtemp(templ.data()) == nullptr) die("mkdtemp failed");
  const fs::path home = templ;
  ::setenv("BATCHAI_HOME", home.c_str(), 1);
  ::setenv("BATCHAI_SIM_DELAY_S", "0", 1);
  auto plane = cp::ControlPlane::open(cp::Settings::from_environment(), batchai::make_process_clock());
  seed(exe, home, *plane, jobs);

  const cp::WorkspaceRef ws{"rg", "ws"};
  Json docs = plane->jobs().list(ws, "exp");
  const Json wire = batchai::serve::to_wire_list(docs);
  const std::size_t bytes = wire.dump().size();
  const double reconcile = median_ms(runs, [&] { plane->reconcile(); });
  const double list = median_ms(runs, [&] { docs = plane->jobs().list(ws, "exp"); });
  const double to_wire = median_ms(runs, [&] { (void)batchai::serve::to_wire_list(docs); });
  const double dump = median_ms(runs, [&] { (void)wire.dump(); });
  const double copy = median_ms(runs, [&] { Json c = wire; });
  const double paged = median_ms(runs, [&] {
    (void)batchai::serve::to_wire_list(plane->jobs().list_page(ws, "exp", {1000, ""}).items).dump();
  });
  // The same page as text made by SQLite's JSON functions, never a JSON tree here: what a reply
  // of pre-serialised JSON would cost (the wire shape: id, name, type on top, the rest nested).
  sqlite3* db = nullptr;
  if (sqlite3_open_v2((home / "state.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) die("no store");
  sqlite3_stmt* st = nullptr;
  const char* sql =
      "SELECT json_object('id', doc->'$.id', 'name', doc->'$.name', 'type', doc->'$.type', 'properties', "
      "json_remove(doc, '$.id', '$.name', '$.type', '$.resourceGroup')) FROM jobs ORDER BY id LIMIT 1001";
  if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) die(sqlite3_errmsg(db));
  std::size_t text_bytes = 0;
  const double sql_text = median_ms(runs, [&] {
    std::string out = "{\"value\":[";
    while (sqlite3_step(st) == SQLITE_ROW) {
      if (out.size() > 10) out += ',';
      out.append(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), static_cast<std::size_t>(sqlite3_column_bytes(st, 0)));
    }
    out += "]}";
    sqlite3_reset(st);
    text_bytes = out.size();
  });
  sqlite3_finalize(st);
  sqlite3_close(db);
  std::printf("%d jobs, answer %.2f MB; median of %d runs, ms:\n", jobs, bytes / 1e6, runs);
  std::printf("  reconcile                      %8.2f\n", reconcile);
  std::printf("  Jobs::list (read + parse)      %8.2f  (includes a reconcile)\n", list);
  std::printf("  to_wire_list                   %8.2f\n", to_wire);
  std::printf("  dump                           %8.2f\n", dump);
  std::printf("  copy of the wire answer        %8.2f\n", copy);
  std::printf("  list_page + to_wire + dump     %8.2f  (the server's path, without HTTP)\n", paged);
  std::printf("  page as text by SQLite's JSON   %8.2f  (%.2f MB; not served this way: Call takes a Json)\n", sql_text,
              text_bytes / 1e6);
  std::error_code ec;
  fs::remove_all(home, ec);
  return 0;
}
