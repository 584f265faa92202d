#include "http/connection_registry.hpp"

#include <vector>

namespace batchai::serve {

ConnectionRegistry::ConnectionRegistry(std::size_t max_total, std::size_t max_per_peer)
    : max_total_(max_total == 0 ? 1 : max_total), max_per_peer_(max_per_peer == 0 ? 1 : max_per_peer) {}

ConnectionRegistry::Id ConnectionRegistry::open(const std::string& peer, TimePoint now, std::function<void()> evict) {
  std::vector<std::function<void()>> evicted;
  Id id = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // The peer's own stalled connections give way first; then anyone's, for the total.
    auto make_room = [&](const std::string& among) {
      const Id victim = oldest_evictable(among);
      if (victim == 0) return false;
      evicted.push_back(std::move(entries_[victim].evict));
      forget(victim);
      return true;
    };
    bool room = true;
    auto it = per_peer_.find(peer);
    if (it != per_peer_.end() && it->second >= max_per_peer_) room = make_room(peer);
    if (room && entries_.size() >= max_total_) room = make_room("");
    if (room) {
      id = next_++;
      entries_[id] = Entry{peer, true, now, std::move(evict)};
      ++per_peer_[peer];
    }
  }
  for (auto& e : evicted)
    if (e) e();
  return id;
}

void ConnectionRegistry::set_evictable(Id id, bool evictable, TimePoint now) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  it->second.evictable = evictable;
  it->second.since = now;
}

void ConnectionRegistry::touch(Id id, TimePoint now) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(id);
  if (it != entries_.end()) it->second.since = now;
}

void ConnectionRegistry::close(Id id) {
  std::lock_guard<std::mutex> lock(mutex_);
  forget(id);
}

std::size_t ConnectionRegistry::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

std::size_t ConnectionRegistry::from_peer(const std::string& peer) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = per_peer_.find(peer);
  return it == per_peer_.end() ? 0 : it->second;
}

// A linear scan: it runs only when a limit is reached, over at most max_total entries.
ConnectionRegistry::Id ConnectionRegistry::oldest_evictable(const std::string& peer) const {
  Id best = 0;
  TimePoint since{};
  for (const auto& [id, e] : entries_) {
    if (!e.evictable || (!peer.empty() && e.peer != peer)) continue;
    if (best == 0 || e.since < since) {
      best = id;
      since = e.since;
    }
  }
  return best;
}

void ConnectionRegistry::forget(Id id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  auto peer = per_peer_.find(it->second.peer);
  if (peer != per_peer_.end() && --peer->second == 0) per_peer_.erase(peer);
  entries_.erase(it);
}

}  // namespace batchai::serve
