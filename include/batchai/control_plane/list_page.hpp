// Keyset paging of the resource lists (the REST server's `maxresults` / `nextLink`, docs/serve.md
// "Paging"): a page is read in SQL as the rows after the ordering key of the previous page's last
// row, LIMIT limit + 1, so a page of 1,000 out of 100,000 reads 1,001 rows, never the rest.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "batchai/common/json_util.hpp"

namespace batchai::control_plane {

struct PageRequest {
  std::size_t limit = 1000;  // 1 or more
  // The ordering key of the last item of the previous page ("" = from the start): what
  // Page::next said. A key that is not of the list's form is refused (InvalidArgument); any other
  // key is only a position, so a forged one reads rows the caller may list anyway.
  std::string after;
};

struct Page {
  Json items = Json::array();       // the documents, as list() returns them
  std::optional<std::string> next;  // when more rows follow: the key to pass as `after`
};

// A page as the stored text of each document, unparsed (what a reader that caches its own
// rendering of each document checks against: the text is exactly what the row holds).
struct TextRow {
  std::int64_t row_id = 0;
  std::string doc;  // the stored JSON text; parse_json gives the document list() returns
};
struct TextPage {
  std::vector<TextRow> rows;
  std::optional<std::string> next;  // as Page::next
};

}  // namespace batchai::control_plane
