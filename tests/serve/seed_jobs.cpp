// serve_seed_jobs: a test-only bulk seeder for the paging tests (issue 24, "ARM paging"). Usage:
//   serve_seed_jobs BATCHAI_EXE HOME COUNT
// makes group rg, workspace ws, experiment exp and a 0-node cluster c with the executable (as
// users do), one real job "job00000" through the control plane (no launcher: its supervisor
// cannot start, so it ends failed with its full document), then COUNT - 1 copies of that row
// named job00001... in one SQL statement: 10,000 jobs in well under a second, not 10,000 runs.
#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "batchai/common/clock.hpp"
#include "batchai/common/process.hpp"
#include "batchai/control_plane/control_plane.hpp"

namespace {

namespace fs = std::filesystem;
namespace cp = batchai::control_plane;

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "serve_seed_jobs: %s\n", why.c_str());
  std::exit(1);
}

void run_cli(const std::string& exe, const fs::path& home, std::vector<std::string> args) {
  auto launcher = batchai::make_posix_process_launcher();
  batchai::ProcessSpec spec;
  spec.argv = {exe};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.stdout_file = home / "seed.out";
  spec.stderr_file = home / "seed.out";
  if (launcher->run(spec).exit_code != 0) die(args[0] + " " + args[1] + " failed");
}

// The COUNT - 1 copies: a fresh lower-case UUID v4 job key each, name and id rewritten.
constexpr const char* kClone = R"sql(
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1),
  k(i, h) AS (SELECT i, lower(hex(randomblob(16))) FROM n)
INSERT INTO jobs(job_key, experiment_id, cluster_id, name_lc, name, state, priority, node_count, created_us, doc, private)
SELECT substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-4' || substr(h, 14, 3) || '-a' || substr(h, 18, 3) || '-' ||
         substr(h, 21, 12),
       j.experiment_id, j.cluster_id, printf('job%05d', i), printf('job%05d', i), j.state, j.priority, j.node_count,
       j.created_us + i,
       json_set(j.doc, '$.name', printf('job%05d', i),
                '$.id', substr(json_extract(j.doc, '$.id'), 1, length(json_extract(j.doc, '$.id')) - 8) ||
                        printf('job%05d', i)),
       j.private
FROM k, jobs j WHERE j.name_lc = 'job00000';
)sql";

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) die("usage: serve_seed_jobs BATCHAI_EXE HOME COUNT");
  const std::string exe = argv[1];
  const fs::path home = argv[2];
  const int count = std::atoi(argv[3]);
  if (count < 1 || count > 99999) die("COUNT must be 1..99999");
  std::filesystem::create_directories(home);
  ::setenv("BATCHAI_HOME", home.c_str(), 1);
  ::setenv("BATCHAI_SIM_DELAY_S", "0", 1);
  run_cli(exe, home, {"group", "create", "-n", "rg", "-l", "eastus"});
  run_cli(exe, home, {"workspace", "create", "-g", "rg", "-n", "ws", "-l", "eastus"});
  run_cli(exe, home, {"experiment", "create", "-g", "rg", "-w", "ws", "-n", "exp"});
  run_cli(exe, home,
          {"cluster", "create", "-g", "rg", "-w", "ws", "-n", "c", "-s", "Standard_D1", "-t", "0", "-u", "u", "-p", "Secret.123"});
  const fs::path job_file = home / "job.json";
  std::ofstream(job_file) << R"({"properties":{"nodeCount":1,"stdOutErrPathPrefix":"$AZ_BATCHAI_JOB_MOUNT_ROOT",)"
                          << R"("customToolkitSettings":{"commandLine":"true"}}})";
  {
    auto plane = cp::ControlPlane::open(cp::Settings::from_environment(), batchai::make_process_clock());
    cp::JobCreateOptions job;
    job.where = {"rg", "ws"};
    job.experiment = "exp";
    job.name = "job00000";
    job.config = batchai::load_json_file(job_file);
    job.cluster = "c";
    plane->jobs().create(job);
  }
  if (count == 1) return 0;
  sqlite3* db = nullptr;
  if (sqlite3_open((home / "state.db").c_str(), &db) != SQLITE_OK) die("cannot open the store");
  sqlite3_busy_timeout(db, 10000);
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, kClone, -1, &st, nullptr) != SQLITE_OK) die(sqlite3_errmsg(db));
  sqlite3_bind_int(st, 1, count - 1);
  if (sqlite3_step(st) != SQLITE_DONE) die(sqlite3_errmsg(db));
  sqlite3_finalize(st);
  const int made = sqlite3_changes(db);
  sqlite3_close(db);
  if (made != count - 1) die("made " + std::to_string(made) + " copies, not " + std::to_string(count - 1));
  return 0;
}
