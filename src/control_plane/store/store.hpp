// The control plane's SQLite store: one database file per $BATCHAI_HOME (WAL, busy_timeout,
// foreign keys), cached prepared statements, write transactions as BEGIN IMMEDIATE with retry,
// and schema migrations through PRAGMA user_version. Tables (v1) are listed in migrations.cpp;
// other modules (jobs) add theirs by appending a Migration to control_plane_migrations().
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "batchai/common/errors.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace batchai::control_plane {

// One schema step: `version` is the user_version after it ran; `sql` may hold several statements.
struct Migration {
  int version;
  std::string sql;
};

// Every step from v1 on, in order (control plane tables first; jobs append later versions).
const std::vector<Migration>& control_plane_migrations();

// A cached prepared statement in use; resets itself (keeping the cache entry) when destroyed.
class Statement {
 public:
  Statement(sqlite3_stmt* stmt, sqlite3* db) : stmt_(stmt), db_(db) {}
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement(Statement&& other) noexcept : stmt_(other.stmt_), db_(other.db_) { other.stmt_ = nullptr; }
  ~Statement();

  // Binds are 1-based like SQLite's; chainable.
  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, const std::string& text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Statement& bind(int index, const std::optional<std::string>& text);
  Statement& bind(int index, const std::optional<std::int64_t>& value);
  Statement& bind_null(int index);

  // Advances to the next row; false when done. Throws SystemError on failure.
  bool step();
  // Runs a statement that returns no rows.
  void run() {
    while (step()) {
    }
  }

  std::string text(int column) const;
  std::int64_t integer(int column) const;
  bool is_null(int column) const;
  std::optional<std::string> optional_text(int column) const;
  std::optional<std::int64_t> optional_integer(int column) const;

 private:
  sqlite3_stmt* stmt_;
  sqlite3* db_;
};

// The state database could not be written because its disk is full (SQLITE_FULL). Reads still
// work: commands that only show state answer from what is stored (Reconciler::reconcile), also
// when the disk had no room left for the WAL (Store::open then opens the file read-only).
class StateDiskFull : public SystemError {
 public:
  using SystemError::SystemError;
};

class Store {
 public:
  // Opens (creating it and its folder) the database and brings its schema to the latest version.
  static std::shared_ptr<Store> open(const std::filesystem::path& db_path,
                                     const std::vector<Migration>& migrations = control_plane_migrations());
  // What open() falls back to on a full disk with no WAL left: the file, read-only and immutable
  // (nothing is created beside it). Reads work; every write throws StateDiskFull.
  static std::shared_ptr<Store> open_read_only(const std::filesystem::path& db_path,
                                               const std::vector<Migration>& migrations = control_plane_migrations());
  // A read-only connection to an existing database, as it is (no schema step, nothing created),
  // whose reads wait at most `busy_timeout_ms` for a writer: for readers that must answer at once
  // (completion). Throws SystemError when the file cannot be opened.
  static std::shared_ptr<Store> open_reader(const std::filesystem::path& db_path, int busy_timeout_ms);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::filesystem::path& path() const { return path_; }
  bool read_only() const { return disk_full_; }
  int schema_version();

  // A cached prepared statement for `sql`, ready to bind.
  Statement prepare(std::string_view sql);
  // Runs SQL text without results (several statements allowed).
  void exec(std::string_view sql);
  std::int64_t last_insert_rowid() const;
  int changes() const;

  // Runs `fn` inside BEGIN IMMEDIATE ... COMMIT (retrying BEGIN while another process holds the
  // write lock), rolling back when it throws. Nested calls join the outer transaction.
  template <typename F>
  auto write(F&& fn) -> decltype(fn()) {
    return transaction(true, std::forward<F>(fn));
  }
  // Runs `fn` inside a deferred (read) transaction: one consistent snapshot.
  template <typename F>
  auto read(F&& fn) -> decltype(fn()) {
    return transaction(false, std::forward<F>(fn));
  }

 private:
  explicit Store(std::filesystem::path path);
  void begin(bool immediate);
  void commit();
  void rollback() noexcept;
  void migrate(const std::vector<Migration>& migrations);

  template <typename F>
  auto transaction(bool immediate, F&& fn) -> decltype(fn()) {
    if (depth_ > 0) {
      ++depth_;
      struct Leave {
        int& d;
        ~Leave() { --d; }
      } leave{depth_};
      return fn();
    }
    begin(immediate);
    depth_ = 1;
    try {
      if constexpr (std::is_void_v<decltype(fn())>) {
        fn();
        depth_ = 0;
        commit();
      } else {
        auto result = fn();
        depth_ = 0;
        commit();
        return result;
      }
    } catch (...) {
      depth_ = 0;
      rollback();
      throw;
    }
  }

  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
  int depth_ = 0;
  bool disk_full_ = false;  // opened read-only because the disk had no room for the WAL
  std::unordered_map<std::string, sqlite3_stmt*> cache_;
};

}  // namespace batchai::control_plane
