#include "arm/arm_paging.hpp"

#include "batchai/common/errors.hpp"
#include "batchai/common/percent_encoding.hpp"
#include "http/encoding.hpp"
#include "arm/wire.hpp"

namespace batchai::serve {
namespace {

[[noreturn]] void bad_token() {
  throw InvalidArgument("The $skiptoken is not one this server made: start the list again without it.",
                        "InvalidSkipToken");
}

}  // namespace

control_plane::PageRequest page_request(const Call& call) {
  control_plane::PageRequest page;
  page.limit = kDefaultMaxResults;
  if (call.has_query("maxresults")) {
    const std::string text = call.query("maxresults");
    const bool plain = !text.empty() && text.size() <= 4 && text.find_first_not_of("0123456789") == std::string::npos;
    const std::size_t n = plain ? std::stoul(text) : 0;
    if (n < 1 || n > kDefaultMaxResults)
      throw InvalidArgument("The query parameter 'maxresults' must be a whole number from 1 to 1000.", "InvalidMaxResults");
    page.limit = n;
  }
  if (call.has_query("$skiptoken")) {
    const std::string token = call.query("$skiptoken");
    if (token.empty() || token.size() > kMaxSkipTokenBytes) bad_token();
    auto key = base64url_decode(token);  // canonical text only
    if (!key || key->empty()) bad_token();
    page.after = std::move(*key);
  }
  return page;
}

std::string skip_token(const std::string& key) { return base64url_encode(key); }

std::string next_link(const Call& call, const control_plane::PageRequest& asked, const std::string& key) {
  std::string link = call.base;
  for (const auto& seg : call.segs) link += "/" + percent_encode_segment(seg);
  // api-version was checked against the served list, so it is plain text.
  link += "?api-version=" + percent_encode_segment(call.query("api-version"));
  link += "&maxresults=" + std::to_string(asked.limit);
  link += "&$skiptoken=" + skip_token(key);
  return link;
}

Json paged_answer(const Call& call, const control_plane::PageRequest& asked, control_plane::Page page) {
  Json answer = to_wire_list(std::move(page.items));
  if (page.next) answer["nextLink"] = next_link(call, asked, *page.next);
  return answer;
}

std::string paged_text(const Call& call, const control_plane::PageRequest& asked,
                       const control_plane::TextPage& page, WireCache& cache) {
  std::optional<std::string> link;
  if (page.next) link = next_link(call, asked, *page.next);
  return cache.page(page, link);
}

}  // namespace batchai::serve
