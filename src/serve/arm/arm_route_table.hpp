// The ARM routes of `batchai serve` as data: one row per (method, path pattern, handler), the
// rows listed in docs/serve.md "Routes" (serve_route_table_test keeps the two equal). Matching is
// pure (segments in, the row and its captured names out), so it is tested without a server;
// the rows themselves and their handlers live in arm_routes.cpp.
#pragma once
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace batchai::serve {

struct Call;
struct ArmContext;

// The values a pattern's {placeholders} captured, as sent (not lower-cased).
class RouteArgs {
 public:
  void add(std::string_view name, std::string value) { values_.emplace_back(name, std::move(value)); }
  // The value of {name}; std::logic_error when the pattern has no such placeholder (a table bug).
  const std::string& operator[](std::string_view name) const;

 private:
  std::vector<std::pair<std::string_view, std::string>> values_;
};

// Which api-versions a route answers (arm_routes.cpp has the lists); kByProvider: those of the
// provider its {provider} segment names (operation polls).
enum class ApiVersions { kSubscription, kResource, kStorage, kBatchAi, kByProvider };

using ArmHandler = void (*)(Call&, ArmContext&, const RouteArgs&);

struct ArmRoute {
  std::string_view method;   // GET also answers HEAD where the pattern has no HEAD row
  std::string_view pattern;  // "/subscriptions/{subscriptionId}/resourceGroups": literals match case-insensitively
  ApiVersions versions;
  ArmHandler handler;
};

struct RouteMatch {
  enum class Outcome { kFound, kNoPath, kNoMethod };
  Outcome outcome = Outcome::kNoPath;
  const ArmRoute* route = nullptr;   // kFound: the row; kNoMethod: a row with this path (its versions)
  RouteArgs args;                    // kFound / kNoMethod: what the path's placeholders captured
};

// The row of `table` for `method` and the path's segments (`low` lower-cased, `segs` as sent);
// the first row whose pattern matches wins.
RouteMatch match_route(std::span<const ArmRoute> table, std::string_view method, const std::vector<std::string>& low,
                       const std::vector<std::string>& segs);

// The served rows, in the order docs/serve.md lists them (defined in arm_routes.cpp).
std::span<const ArmRoute> arm_route_table();

}  // namespace batchai::serve
