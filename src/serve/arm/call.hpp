// One HTTP request as the routes see it: its path split into segments (empty ones dropped, so
// "//metadata" matches; compared lower-case, ARM paths being case-insensitive), the server's
// base URL, and helpers that answer with JSON or an ARM error.
#pragma once
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "http/http_message.hpp"

#include "batchai/common/json_util.hpp"

namespace batchai::serve {

struct Call {
  Call(const HttpRequest& request, HttpResponse& response, std::string base_url);

  const HttpRequest& req;
  HttpResponse& res;
  std::string base;               // https://localhost:PORT
  std::vector<std::string> segs;  // as sent
  std::vector<std::string> low;   // lower-cased

  const std::string& method() const { return req.method; }
  // The segments from `from` on equal `pattern` ("*" matches any one), case-insensitively.
  bool is(std::initializer_list<std::string_view> pattern, std::size_t from = 0) const;
  std::string query(const char* name) const;  // "" when absent
  bool has_query(const char* name) const { return req.has_param(name); }

  void json(int status, const Json& body);
  // `body` is JSON text already (e.g. joined from cached parts): sent as it is, as json() would.
  void json_text(int status, std::string body);
  void empty(int status);
  // ARM's error answer (error_answer.hpp): {"error":{"code","message"}} with `status`.
  void error(int status, const std::string& code, const std::string& message);
  // The request body as a JSON object ({} when empty); InvalidArgument on anything else.
  Json body_object() const;
};

// ARM's api-version rule: missing -> 400 MissingApiVersionParameter, not one of `supported` ->
// 400 InvalidApiVersionParameter; answers the error and returns false then.
bool check_api_version(Call& call, const std::vector<std::string>& supported);

}  // namespace batchai::serve
