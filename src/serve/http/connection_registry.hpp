// The connections `batchai serve` holds (docs/serve.md "Limits"): at most so many in total and
// from one address. When a new connection would pass a limit, the one whose peer has made no
// progress for longest gives way among those waiting on their peer (a silent peer, a slow head
// or body, an unread answer, an idle keep-alive), as nginx reuses idle connections: a flood of
// idle or trickling sockets cannot lock out a client with work. Only a connection whose request
// is with a worker cannot give way, and workers and their queue are bounded.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

namespace batchai::serve {

class ConnectionRegistry {
 public:
  using Id = std::uint64_t;
  using TimePoint = std::chrono::steady_clock::time_point;

  ConnectionRegistry(std::size_t max_total, std::size_t max_per_peer);

  // Registers a connection from `peer`, evictable (it has sent nothing yet); `evict` closes it
  // and is called (outside the lock) if it must give way. 0 when no connection can give way:
  // the new one is refused.
  Id open(const std::string& peer, TimePoint now, std::function<void()> evict);
  // Whether `id` may give way: true while it waits on its peer (a head, a body, an answer being
  // taken), false while a worker has its request. `now` starts its time without progress.
  void set_evictable(Id id, bool evictable, TimePoint now);
  // The peer made progress (sent body bytes, took a piece of the answer): its time restarts.
  void touch(Id id, TimePoint now);
  void close(Id id);

  std::size_t size() const;
  std::size_t from_peer(const std::string& peer) const;

 private:
  struct Entry {
    std::string peer;
    bool evictable = true;
    TimePoint since;  // the peer's last progress
    std::function<void()> evict;
  };
  // The evictable connection without progress longest, among `peer`'s when not empty; 0 when none.
  Id oldest_evictable(const std::string& peer) const;
  void forget(Id id);

  mutable std::mutex mutex_;
  std::size_t max_total_;
  std::size_t max_per_peer_;
  Id next_ = 1;
  std::unordered_map<Id, Entry> entries_;
  std::map<std::string, std::size_t> per_peer_;
};

}  // namespace batchai::serve
