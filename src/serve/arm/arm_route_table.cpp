#include "arm/arm_route_table.hpp"

#include <cctype>
#include <stdexcept>

namespace batchai::serve {
namespace {

// The pattern's segments ("/a/{b}/c" -> a, {b}, c).
std::vector<std::string_view> pattern_segments(std::string_view pattern) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= pattern.size()) {
    std::size_t end = pattern.find('/', start);
    if (end == std::string_view::npos) end = pattern.size();
    if (end > start) out.push_back(pattern.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

bool is_placeholder(std::string_view seg) { return seg.size() > 2 && seg.front() == '{' && seg.back() == '}'; }

// `low` (already lower-case) equals the literal `seg` ignoring case.
bool literal_equals(std::string_view seg, const std::string& low) {
  if (seg.size() != low.size()) return false;
  for (std::size_t i = 0; i < seg.size(); ++i)
    if (static_cast<char>(std::tolower(static_cast<unsigned char>(seg[i]))) != low[i]) return false;
  return true;
}

bool path_matches(std::string_view pattern, const std::vector<std::string>& low, const std::vector<std::string>& segs,
                  RouteArgs* args) {
  const auto parts = pattern_segments(pattern);
  if (parts.size() != low.size()) return false;
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (!is_placeholder(parts[i]) && !literal_equals(parts[i], low[i])) return false;
  if (args)
    for (std::size_t i = 0; i < parts.size(); ++i)
      if (is_placeholder(parts[i])) args->add(parts[i].substr(1, parts[i].size() - 2), segs[i]);
  return true;
}

}  // namespace

const std::string& RouteArgs::operator[](std::string_view name) const {
  for (const auto& [key, value] : values_)
    if (key == name) return value;
  throw std::logic_error("route has no placeholder {" + std::string(name) + "}");
}

RouteMatch match_route(std::span<const ArmRoute> table, std::string_view method, const std::vector<std::string>& low,
                       const std::vector<std::string>& segs) {
  RouteMatch m;
  const ArmRoute* path_row = nullptr;  // the first row with this path, whatever its method
  const ArmRoute* get_row = nullptr;   // HEAD falls back to the path's GET row
  for (const ArmRoute& row : table) {
    if (!path_matches(row.pattern, low, segs, nullptr)) continue;
    if (!path_row) path_row = &row;
    if (row.method == method) {
      m.route = &row;
      break;
    }
    if (method == "HEAD" && row.method == "GET" && !get_row) get_row = &row;
  }
  if (!m.route) m.route = get_row;
  if (m.route) {
    m.outcome = RouteMatch::Outcome::kFound;
  } else if (path_row) {
    m.outcome = RouteMatch::Outcome::kNoMethod;
    m.route = path_row;
  } else {
    return m;
  }
  path_matches(m.route->pattern, low, segs, &m.args);
  return m;
}

}  // namespace batchai::serve
