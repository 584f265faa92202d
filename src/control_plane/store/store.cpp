// SQLite store: connection setup, statement cache, transactions with retry, migrations.
#include "store/store.hpp"

#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <chrono>
#include <thread>

#include "batchai/common/errors.hpp"
#include "batchai/common/percent_encoding.hpp"

namespace batchai::control_plane {
namespace {

constexpr int kBusyTimeoutMs = 30000;
// BEGIN IMMEDIATE already waits kBusyTimeoutMs in SQLite's busy handler; these retries cover
// the rare SQLITE_BUSY returned without waiting (WAL recovery, schema changes).
constexpr int kBeginRetries = 200;
constexpr const char* kDiskFullHint = ". Free space where $BATCHAI_HOME is.";

[[noreturn]] void fail(sqlite3* db, const std::string& what) {
  if (db != nullptr && sqlite3_errcode(db) == SQLITE_FULL)
    throw StateDiskFull(what + ": " + sqlite3_errmsg(db) + kDiskFullHint);
  throw SystemError(what + ": " + (db ? sqlite3_errmsg(db) : "out of memory") +
                    ". Check that $BATCHAI_HOME is writable and not on a network file system.");
}

// Whether the file system that holds `path` has no block left for an unprivileged writer.
bool no_space_left(const std::filesystem::path& path) {
  struct statvfs fs {};
  return ::statvfs(path.c_str(), &fs) == 0 && fs.f_bavail == 0;
}

// `path` as an SQLite URI with `immutable=1`; percent-encoded, so a '?', '#' or '%' in
// $BATCHAI_HOME stays part of the file name.
std::string immutable_uri(const std::filesystem::path& path) {
  return "file:" + percent_encode_path(path.string()) + "?immutable=1";
}

// A write-ahead log that holds committed pages the database file lacks.
bool wal_has_pages(const std::filesystem::path& db_path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(db_path.string() + "-wal", ec);
  return !ec && size > 0;
}

}  // namespace

Statement::~Statement() {
  if (stmt_) {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
}

Statement& Statement::bind(int index, std::string_view text) {
  if (sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT) != SQLITE_OK)
    fail(db_, "binding a text parameter");
  return *this;
}

Statement& Statement::bind(int index, std::int64_t value) {
  if (sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) fail(db_, "binding an integer parameter");
  return *this;
}

Statement& Statement::bind(int index, const std::optional<std::string>& text) {
  return text ? bind(index, std::string_view(*text)) : bind_null(index);
}

Statement& Statement::bind(int index, const std::optional<std::int64_t>& value) {
  return value ? bind(index, *value) : bind_null(index);
}

Statement& Statement::bind_null(int index) {
  sqlite3_bind_null(stmt_, index);
  return *this;
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  std::string sql = sqlite3_sql(stmt_);
  sqlite3_reset(stmt_);
  if (rc == SQLITE_CONSTRAINT) throw Conflict(std::string("state conflict: ") + sqlite3_errmsg(db_), "Conflict");
  fail(db_, "running '" + sql.substr(0, 60) + "'");
}

std::string Statement::text(int column) const {
  const auto* p = sqlite3_column_text(stmt_, column);
  if (!p) return {};
  return std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::int64_t Statement::integer(int column) const { return sqlite3_column_int64(stmt_, column); }

bool Statement::is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

std::optional<std::string> Statement::optional_text(int column) const {
  if (is_null(column)) return std::nullopt;
  return text(column);
}

std::optional<std::int64_t> Statement::optional_integer(int column) const {
  if (is_null(column)) return std::nullopt;
  return integer(column);
}

Store::Store(std::filesystem::path path) : path_(std::move(path)) {}

Store::~Store() {
  for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
  if (db_) sqlite3_close_v2(db_);
}

std::shared_ptr<Store> Store::open(const std::filesystem::path& db_path, const std::vector<Migration>& migrations) {
  std::error_code ec;
  if (db_path.has_parent_path()) {
    std::filesystem::create_directories(db_path.parent_path(), ec);
    if (ec)
      throw SystemError("Cannot create the state folder '" + db_path.parent_path().string() + "': " + ec.message());
  }
  std::shared_ptr<Store> store(new Store(db_path));
  int rc = sqlite3_open_v2(db_path.c_str(), &store->db_,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) fail(store->db_, "Cannot open the state database '" + db_path.string() + "'");
  ::chmod(db_path.c_str(), 0600);
  sqlite3_busy_timeout(store->db_, kBusyTimeoutMs);
  // journal_mode=WAL needs a short write lock the first time; the busy handler covers it. On a
  // full disk with no WAL left by a connection, creating the WAL index fails as an I/O error.
  try {
    store->exec("PRAGMA journal_mode=WAL");
  } catch (const SystemError&) {
    if (!no_space_left(db_path.parent_path())) throw;
    if (wal_has_pages(db_path))
      throw StateDiskFull("Cannot open the state database: the disk is full" + std::string(kDiskFullHint));
    return open_read_only(db_path, migrations);
  }
  store->exec("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON");
  store->migrate(migrations);
  return store;
}

// With no WAL left the file holds every commit, and an immutable open creates nothing (no WAL,
// no index): commands that show state still answer; every write fails saying the disk is full.
std::shared_ptr<Store> Store::open_read_only(const std::filesystem::path& db_path,
                                             const std::vector<Migration>& migrations) {
  std::shared_ptr<Store> store(new Store(db_path));
  store->disk_full_ = true;
  const int rc = sqlite3_open_v2(immutable_uri(db_path).c_str(), &store->db_,
                                 SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) fail(store->db_, "Cannot open the state database '" + db_path.string() + "' to read it");
  store->exec("PRAGMA foreign_keys=ON");
  if (!migrations.empty() && store->schema_version() < migrations.back().version)
    throw StateDiskFull("Cannot bring the state database to this version: the disk is full" +
                        std::string(kDiskFullHint));
  return store;
}

std::shared_ptr<Store> Store::open_reader(const std::filesystem::path& db_path, int busy_timeout_ms) {
  std::shared_ptr<Store> store(new Store(db_path));
  if (sqlite3_open_v2(db_path.c_str(), &store->db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK)
    fail(store->db_, "Cannot open the state database '" + db_path.string() + "' to read it");
  sqlite3_busy_timeout(store->db_, busy_timeout_ms);
  return store;
}

int Store::schema_version() {
  auto st = prepare("PRAGMA user_version");
  return st.step() ? static_cast<int>(st.integer(0)) : 0;
}

Statement Store::prepare(std::string_view sql) {
  std::string key(sql);
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v3(db_, key.c_str(), static_cast<int>(key.size()), SQLITE_PREPARE_PERSISTENT, &stmt,
                           nullptr) != SQLITE_OK)
      fail(db_, "preparing '" + key.substr(0, 60) + "'");
    it = cache_.emplace(std::move(key), stmt).first;
  }
  return Statement(it->second, db_);
}

void Store::exec(std::string_view sql) {
  std::string text(sql);
  char* error = nullptr;
  int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error);
  if (rc != SQLITE_OK) {
    std::string message = error ? error : sqlite3_errstr(rc);
    sqlite3_free(error);
    throw SystemError("SQLite statement failed (" + message + "): " + text.substr(0, 80));
  }
}

std::int64_t Store::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }
int Store::changes() const { return sqlite3_changes(db_); }

void Store::begin(bool immediate) {
  if (immediate && disk_full_)
    throw StateDiskFull("Cannot write to the state database: the disk is full" + std::string(kDiskFullHint));
  const char* sql = immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED";
  for (int attempt = 0;; ++attempt) {
    int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) return;
    if ((rc == SQLITE_BUSY || rc == SQLITE_LOCKED) && attempt < kBeginRetries) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5 + attempt % 20));
      continue;
    }
    fail(db_, "Cannot start a transaction on the state database (another batchai process may hold it)");
  }
}

void Store::commit() {
  for (int attempt = 0;; ++attempt) {
    int rc = sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) return;
    if (rc == SQLITE_BUSY && attempt < kBeginRetries) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    std::string message = sqlite3_errmsg(db_);
    rollback();
    if ((rc & 0xff) == SQLITE_FULL)
      throw StateDiskFull("Cannot commit to the state database: " + message + kDiskFullHint);
    throw SystemError("Cannot commit to the state database: " + message);
  }
}

void Store::rollback() noexcept {
  if (!sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void Store::migrate(const std::vector<Migration>& migrations) {
  if (!migrations.empty() && schema_version() >= migrations.back().version) return;  // the usual case
  write([&] {
    // Re-read inside the write lock: another process may have migrated meanwhile.
    int current = schema_version();
    for (const auto& step : migrations) {
      if (step.version <= current) continue;
      exec(step.sql);
      exec("PRAGMA user_version=" + std::to_string(step.version));
      current = step.version;
    }
  });
}

}  // namespace batchai::control_plane
