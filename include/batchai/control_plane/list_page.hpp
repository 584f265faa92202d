// Keyset paging of the resource lists (the REST server's `maxresults` / `nextLink`, docs/serve.md
// "Paging"): a page is read in SQL as the rows after the ordering key of the previous page's last
// row, LIMIT limit + 1, so a page of 1,000 out of 100,000 reads 1,001 rows, never the rest.
#pragma once
#include <cstddef>
#include <optional>
#include <string>

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

}  // namespace batchai::control_plane
