#include "arm/wire.hpp"

#include <cstdio>
#include <set>
#include <string>

#include "batchai/common/clock.hpp"

namespace batchai::serve {
namespace {

// Moves every value where it goes (no deep copies: a 1,000-job list is ~3 MB of documents).
Json nest(Json doc, const std::set<std::string>& top) {
  if (!doc.is_object()) return doc;
  Json out = Json::object();
  Json props = Json::object();
  for (auto& [key, value] : doc.items()) {
    if (key == "resourceGroup") continue;
    if (top.count(key)) {
      out[key] = std::move(value);
    } else if (key == "properties" && value.is_object()) {
      for (auto& [k, v] : value.items()) props[k] = std::move(v);
    } else {
      props[key] = std::move(value);
    }
  }
  if (!props.empty()) out["properties"] = std::move(props);
  return out;
}

// The control plane keeps durations as az prints them (timedelta text); the SDK's deserializer
// reads the wire's ISO 8601 ("P7D") only. Unreadable text is left as it is.
void durations_to_iso(Json& wire) {
  if (!wire.contains("properties") || !wire["properties"].is_object()) return;
  Json& props = wire["properties"];
  if (!props.contains("constraints") || !props["constraints"].is_object()) return;
  Json& constraints = props["constraints"];
  if (!constraints.contains("maxWallClockTime") || !constraints["maxWallClockTime"].is_string()) return;
  if (auto d = parse_duration(constraints["maxWallClockTime"].get<std::string>()))
    constraints["maxWallClockTime"] = iso_duration(*d);
}

}  // namespace

std::string iso_duration(Micros d) {
  long long us = d.count() < 0 ? 0 : d.count();
  const long long days = us / (86400LL * 1000000);
  us %= 86400LL * 1000000;
  const long long hours = us / (3600LL * 1000000);
  us %= 3600LL * 1000000;
  const long long minutes = us / (60LL * 1000000);
  us %= 60LL * 1000000;
  std::string out = "P";
  if (days) out += std::to_string(days) + "D";
  if (hours || minutes || us || !days) {
    out += "T";
    if (hours) out += std::to_string(hours) + "H";
    if (minutes) out += std::to_string(minutes) + "M";
    if (us || (!hours && !minutes)) {
      out += std::to_string(us / 1000000);
      if (us % 1000000) {
        char fraction[8];
        std::snprintf(fraction, sizeof fraction, ".%06lld", us % 1000000);
        out += fraction;
      }
      out += "S";
    }
  }
  return out;
}

Json to_wire(Json doc) {
  static const std::set<std::string> kTop = {"id",   "name",     "type",     "location", "tags",
                                             "sku",  "kind",     "identity", "etag",     "managedBy"};
  Json wire = nest(std::move(doc), kTop);
  durations_to_iso(wire);
  return wire;
}

Json to_wire_list(Json docs) {
  Json value = Json::array();
  if (docs.is_array())
    for (auto& d : docs) value.push_back(to_wire(std::move(d)));
  return {{"value", std::move(value)}};
}

Json output_file_to_wire(Json entry) {
  static const std::set<std::string> kTop = {"name", "fileType", "downloadUrl"};
  return nest(std::move(entry), kTop);
}

}  // namespace batchai::serve
