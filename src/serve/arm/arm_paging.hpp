// ARM paging of the lists `batchai serve` answers (docs/serve.md "Paging"): Batch AI 2018-05-01's
// `maxresults` (1..1000, default 1000) in, at most that many items out, and when more follow a
// `nextLink`: this server's absolute URL of the same list with api-version, maxresults and a
// `$skiptoken` (the control plane's keyset position, base64url). Clients GET the nextLink as it
// is (azure-core's ItemPaged, and so az); the token comes back as hostile input and is checked.
#pragma once
#include <optional>
#include <string>

#include "batchai/common/json_util.hpp"
#include "batchai/control_plane/list_page.hpp"
#include "arm/call.hpp"
#include "arm/wire_cache.hpp"

namespace batchai::serve {

inline constexpr std::size_t kDefaultMaxResults = 1000;
inline constexpr std::size_t kMaxSkipTokenBytes = 344;  // base64url of the control plane's 256-byte keys

// The page `call` asks for: `maxresults` (a plain decimal 1..1000; 400 InvalidMaxResults
// otherwise) and `$skiptoken` (canonical base64url of at most 256 bytes; 400 InvalidSkipToken
// otherwise). The control plane checks the decoded key's form for its list.
control_plane::PageRequest page_request(const Call& call);

// The skiptoken of a control plane key, and the nextLink that carries it for `call`'s list
// (its path as sent, percent-encoded again; its api-version; the same maxresults).
std::string skip_token(const std::string& key);
std::string next_link(const Call& call, const control_plane::PageRequest& asked, const std::string& key);

// {"value": [to_wire(each item)], "nextLink": ...} for a page of the control plane's documents.
Json paged_answer(const Call& call, const control_plane::PageRequest& asked, control_plane::Page page);
// The same answer as text, each item's wire text from `cache` (no JSON tree is built).
std::string paged_text(const Call& call, const control_plane::PageRequest& asked,
                       const control_plane::TextPage& page, WireCache& cache);

}  // namespace batchai::serve
