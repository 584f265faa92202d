// The server's access log (docs/serve.md "Access log"): one line per answered request with the
// time the server spent on it, so an operator (and the benchmarks) can tell the server's own
// latency from the client's. Bounded: past max_bytes the file becomes FILE.1 (one kept) and a new
// one starts. Paths are written without their query (links carry tokens and signatures there)
// nor a file link's signed part, and with every byte that is not printable ASCII escaped, so a
// client cannot forge lines.
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace batchai::serve {

struct AccessEntry {
  std::string_view peer;
  std::string_view method;  // empty: no head was parsed
  std::string_view path;    // without the query
  int status = 0;
  std::uint64_t bytes = 0;  // the answer's body
  std::chrono::microseconds took{0};  // from the whole head read to the answer's last byte written
  bool completed = true;    // false: the client left before the answer was written
};

class AccessLog {
 public:
  // Opens (appends to) `path`, 0600, made if missing; throws SystemError when it cannot.
  AccessLog(std::filesystem::path path, std::uint64_t max_bytes);
  ~AccessLog();
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;

  // Any thread. Never throws; a line that cannot be written is dropped.
  void record(const AccessEntry& entry);

  // The line record() writes, without its newline (for tests).
  static std::string format(const AccessEntry& entry, std::chrono::system_clock::time_point at);

 private:
  void rotate_locked();

  std::filesystem::path path_;
  std::uint64_t max_bytes_;
  std::mutex mutex_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

}  // namespace batchai::serve
