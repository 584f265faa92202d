// A bounded, thread-safe cache of each stored document's wire text (to_wire(doc).dump()), so that
// a page of 1,000 jobs is joined from text instead of parsed, rebuilt and dumped per request.
// An entry is used only when the row's stored text is exactly the text it was made from: a job
// that changed is rendered again, never served stale.
#pragma once
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "batchai/control_plane/list_page.hpp"

namespace batchai::serve {

class WireCache {
 public:
  struct Entry {
    std::string doc;   // the stored text it was made from
    std::string wire;  // to_wire(parse(doc)).dump()
  };

  WireCache(std::size_t max_entries = 16384, std::size_t max_bytes = std::size_t{48} << 20);
  WireCache(const WireCache&) = delete;
  WireCache& operator=(const WireCache&) = delete;

  // The wire text of row `row_id` whose stored text is `doc`: the cached one when it was made
  // from exactly `doc`, else rendered now (and kept, the least recently used going first).
  std::shared_ptr<const Entry> wire(std::int64_t row_id, const std::string& doc);

  // {"nextLink": next_link, "value": [wire of each row]}, the bytes Json's dump() gives for the
  // tree (object keys in order; no nextLink when there is none).
  std::string page(const control_plane::TextPage& page, const std::optional<std::string>& next_link);

  std::size_t entries() const;
  std::size_t bytes() const;

 private:
  struct Slot {
    std::shared_ptr<const Entry> entry;
    std::list<std::int64_t>::iterator age;  // its place in lru_ (front: most recent)
  };
  static std::size_t cost(const Entry& e) { return e.doc.size() + e.wire.size() + 128; }
  void evict_locked();

  const std::size_t max_entries_;
  const std::size_t max_bytes_;
  mutable std::mutex mutex_;
  std::unordered_map<std::int64_t, Slot> slots_;
  std::list<std::int64_t> lru_;
  std::size_t bytes_ = 0;
};

}  // namespace batchai::serve
