#include "arm/wire_cache.hpp"

#include "batchai/common/json_util.hpp"
#include "arm/wire.hpp"

namespace batchai::serve {

WireCache::WireCache(std::size_t max_entries, std::size_t max_bytes)
    : max_entries_(max_entries), max_bytes_(max_bytes) {}

std::shared_ptr<const WireCache::Entry> WireCache::wire(std::int64_t row_id, const std::string& doc) {
  std::shared_ptr<const Entry> found;
  {
    std::lock_guard lock(mutex_);
    if (auto it = slots_.find(row_id); it != slots_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.age);
      found = it->second.entry;
    }
  }
  // The exact check, outside the lock: the entry is immutable and shared.
  if (found && found->doc == doc) return found;

  // Rendered as the tree path renders it (stored text parsed as the control plane parses it).
  auto made = std::make_shared<const Entry>(Entry{doc, to_wire(Json::parse(doc)).dump()});
  const std::size_t made_cost = cost(*made);
  if (made_cost > max_bytes_ || max_entries_ == 0) return made;  // too big to keep
  std::lock_guard lock(mutex_);
  auto [it, inserted] = slots_.try_emplace(row_id);
  if (inserted) {
    lru_.push_front(row_id);
    it->second.age = lru_.begin();
  } else {
    bytes_ -= cost(*it->second.entry);
    lru_.splice(lru_.begin(), lru_, it->second.age);
  }
  it->second.entry = made;
  bytes_ += made_cost;
  evict_locked();
  return made;
}

void WireCache::evict_locked() {
  while (!lru_.empty() && (slots_.size() > max_entries_ || bytes_ > max_bytes_)) {
    auto it = slots_.find(lru_.back());
    bytes_ -= cost(*it->second.entry);
    slots_.erase(it);
    lru_.pop_back();
  }
}

std::string WireCache::page(const control_plane::TextPage& page, const std::optional<std::string>& next_link) {
  std::vector<std::shared_ptr<const Entry>> items;
  items.reserve(page.rows.size());
  std::size_t size = 16;
  for (const auto& row : page.rows) {
    items.push_back(wire(row.row_id, row.doc));
    size += items.back()->wire.size() + 1;
  }
  const std::string link = next_link ? Json(*next_link).dump() : std::string();
  std::string out;
  out.reserve(size + link.size() + 16);
  // Json objects keep their keys sorted: "nextLink" comes before "value".
  out += '{';
  if (next_link) out.append("\"nextLink\":").append(link).append(",");
  out += "\"value\":[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    out += items[i]->wire;
  }
  out += "]}";
  return out;
}

std::size_t WireCache::entries() const {
  std::lock_guard lock(mutex_);
  return slots_.size();
}

std::size_t WireCache::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

}  // namespace batchai::serve
