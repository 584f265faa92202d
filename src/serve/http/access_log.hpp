// The server's access log (docs/serve.md "Access log"): one line per answered request with the
// time the server spent on it, so an operator (and the benchmarks) can tell the server's own
// latency from the client's. Bounded: past max_bytes the file becomes FILE.1 (one kept) and a new
// one starts. Paths are written without their query (links carry tokens and signatures there)
// nor what follows a secret prefix (a signed link's signature: the routes name the prefixes), and with every byte that is not printable ASCII escaped, so a
// client cannot forge lines. Lines are written by a thread of the log's own: a slow or stalled
// file (a full pipe, a hung network mount) never holds up the thread that answers; past a bounded
// queue lines are dropped, counted, and the count written once the file takes lines again.
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

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
  static constexpr std::size_t kDefaultQueueBytes = std::size_t{1} << 20;
  static constexpr std::chrono::seconds kDrainWait{2};

  // Opens (appends to) `path`, 0600, made if missing; throws SystemError when it cannot (a FIFO
  // without a reader included: the open does not wait for one).
  AccessLog(std::filesystem::path path, std::uint64_t max_bytes, std::size_t max_queued_bytes = kDefaultQueueBytes,
            std::vector<std::string> secret_path_prefixes = {});
  // Writes what is queued, waiting at most kDrainWait for a stalled file; past that the writer
  // thread is left to finish (or stay blocked) on its own. A path under one of
  // `secret_path_prefixes` is written as that prefix and "(signed link)": the rest works for anyone who has it.
  ~AccessLog();
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;

  // Any thread. Never throws and never waits for the file; a line the queue has no room for is
  // dropped and counted.
  void record(const AccessEntry& entry);
  std::uint64_t dropped() const;

  // The line record() writes, without its newline (for tests).
  static std::string format(const AccessEntry& entry, std::chrono::system_clock::time_point at,
                            std::span<const std::string> secret_path_prefixes = {});

 private:
  struct State;  // shared with the writer thread, which may outlive the log (see ~AccessLog)
  std::shared_ptr<State> state_;
  std::vector<std::string> secret_path_prefixes_;  // set once, read by any thread
  std::thread writer_;
};

}  // namespace batchai::serve
