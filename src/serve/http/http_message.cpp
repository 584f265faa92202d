#include "http/http_message.hpp"

#include <algorithm>
#include <cctype>

#include "http/encoding.hpp"

namespace batchai::serve {

bool HeaderNameLess::operator()(const std::string& a, const std::string& b) const {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) < std::tolower(static_cast<unsigned char>(y));
  });
}

bool HttpRequest::has_header(std::string_view name) const { return headers.count(std::string(name)) > 0; }

std::string HttpRequest::get_header_value(std::string_view name) const {
  auto it = headers.find(std::string(name));
  return it == headers.end() ? std::string() : it->second;
}

bool HttpRequest::has_param(std::string_view name) const { return params.count(std::string(name)) > 0; }

std::string HttpRequest::get_param_value(std::string_view name) const {
  auto it = params.find(std::string(name));
  return it == params.end() ? std::string() : it->second;
}

void HttpResponse::set_header(const std::string& name, const std::string& value) {
  // Values reach the wire as they are: a CR or LF would start a header of the caller's choosing.
  if (value.find_first_of("\r\n") != std::string::npos || name.find_first_of("\r\n: ") != std::string::npos) return;
  headers.erase(name);  // the map compares names case-insensitively
  headers.emplace(name, value);
}

void HttpResponse::set_content(std::string content, const std::string& content_type) {
  body = std::move(content);
  file.reset();
  set_header("Content-Type", content_type);
}

void HttpResponse::set_file(FileBody b, const std::string& content_type) {
  body.clear();
  file = std::move(b);
  set_header("Content-Type", content_type);
}

bool split_target(std::string_view target, std::string& path, std::multimap<std::string, std::string>& params) {
  const auto q = target.find('?');
  auto decoded = percent_decode(target.substr(0, q), false);
  if (!decoded) return false;
  path = std::move(*decoded);
  if (q == std::string_view::npos) return true;
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    auto key = percent_decode(pair.substr(0, eq), true);
    auto value = percent_decode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1), true);
    if (!key || !value) return false;
    params.emplace(std::move(*key), std::move(*value));
  }
  return true;
}

}  // namespace batchai::serve
