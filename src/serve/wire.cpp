#include "wire.hpp"

#include <set>
#include <string>

namespace batchai::serve {
namespace {

Json nest(const Json& doc, const std::set<std::string>& top) {
  if (!doc.is_object()) return doc;
  Json out = Json::object();
  Json props = Json::object();
  for (const auto& [key, value] : doc.items()) {
    if (key == "resourceGroup") continue;
    if (top.count(key)) {
      out[key] = value;
    } else if (key == "properties" && value.is_object()) {
      for (const auto& [k, v] : value.items()) props[k] = v;
    } else {
      props[key] = value;
    }
  }
  if (!props.empty()) out["properties"] = std::move(props);
  return out;
}

}  // namespace

Json to_wire(const Json& doc) {
  static const std::set<std::string> kTop = {"id",   "name",     "type",     "location", "tags",
                                             "sku",  "kind",     "identity", "etag",     "managedBy"};
  return nest(doc, kTop);
}

Json to_wire_list(const Json& docs) {
  Json value = Json::array();
  if (docs.is_array())
    for (const auto& d : docs) value.push_back(to_wire(d));
  return {{"value", std::move(value)}};
}

Json output_file_to_wire(const Json& entry) {
  static const std::set<std::string> kTop = {"name", "fileType", "downloadUrl"};
  return nest(entry, kTop);
}

}  // namespace batchai::serve
