#include "arm/call.hpp"

#include <algorithm>
#include <cctype>

#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"
#include "error_answer.hpp"

namespace batchai::serve {

Call::Call(const HttpRequest& request, HttpResponse& response, std::string base_url)
    : req(request), res(response), base(std::move(base_url)) {
  std::size_t start = 0;
  const std::string& path = req.path;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) {
      segs.push_back(path.substr(start, end - start));
      low.push_back(to_lower(segs.back()));
    }
    start = end + 1;
  }
}

bool Call::is(std::initializer_list<std::string_view> pattern, std::size_t from) const {
  if (low.size() != from + pattern.size()) return false;
  std::size_t i = from;
  for (std::string_view p : pattern) {
    if (p != "*" && low[i] != p) return false;
    ++i;
  }
  return true;
}

std::string Call::query(const char* name) const { return req.has_param(name) ? req.get_param_value(name) : std::string(); }

void Call::json(int status, const Json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json; charset=utf-8");
}

void Call::json_text(int status, std::string body) {
  res.status = status;
  res.set_content(std::move(body), "application/json; charset=utf-8");
}

void Call::empty(int status) {
  res.status = status;
  res.body.clear();
}

void Call::error(int status, const std::string& code, const std::string& message) {
  reply_json_error(res, status, code, message);
}

Json Call::body_object() const {
  if (std::all_of(req.body.begin(), req.body.end(), [](unsigned char c) { return std::isspace(c); }))
    return Json::object();
  Json body;
  try {
    body = parse_json_text(req.body, "the request body");
  } catch (const InvalidArgument& e) {
    // ARM's code for a body it cannot parse (malformed, or nesting past kMaxJsonDepth).
    throw InvalidArgument(e.what(), "InvalidRequestContent");
  }
  if (!body.is_object()) throw InvalidArgument("The request body must be a JSON object.", "InvalidRequestContent");
  return body;
}

bool check_api_version(Call& call, const std::vector<std::string>& supported) {
  if (!call.has_query("api-version")) {
    call.error(400, "MissingApiVersionParameter", "The api-version query parameter (?api-version=) is required for all requests.");
    return false;
  }
  const std::string version = call.query("api-version");
  if (std::find(supported.begin(), supported.end(), version) != supported.end()) return true;
  std::string list;
  for (const auto& v : supported) list += (list.empty() ? "" : ", ") + v;
  // The rejected value is echoed only when it is short and plain.
  const bool plain = version.size() <= 32 && std::all_of(version.begin(), version.end(), [](unsigned char c) {
                       return std::isalnum(c) || c == '-' || c == '.';
                     });
  call.error(400, "InvalidApiVersionParameter",
             "The api-version '" + (plain ? version : std::string("(invalid)")) +
                 "' is invalid. The supported versions are '" + list + "'.");
  return false;
}

}  // namespace batchai::serve
