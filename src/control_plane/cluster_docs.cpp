#include "cluster_docs.hpp"

#include "context.hpp"
#include "engine/cluster_engine.hpp"
#include "store/rows.hpp"

namespace batchai::control_plane {

using namespace detail;

namespace {

Json scale_settings_of(const ClusterRow& c) {
  if (c.scale_mode == "manual") {
    Json manual = Json::object();
    const Json scale = c.doc.is_object() ? c.doc.value("scaleSettings", Json()) : Json();
    if (scale.is_object() && scale.contains("manual") && scale["manual"].is_object()) manual = scale["manual"];
    manual["targetNodeCount"] = c.target;
    if (!manual.contains("nodeDeallocationOption")) manual["nodeDeallocationOption"] = "requeue";
    return {{"autoScale", nullptr}, {"manual", manual}};
  }
  return {{"autoScale",
           {{"initialNodeCount", c.target}, {"maximumNodeCount", c.max_nodes}, {"minimumNodeCount", c.min_nodes}}},
          {"manual", nullptr}};
}

}  // namespace

void ClusterDocs::refresh(std::int64_t cluster_row_id) const {
  Store& store = cx_.store();
  store.write([&] {
    auto c = load_cluster(store, cluster_row_id);
    if (!c) return;
    engines_.of(*c).refresh_counts(*c);
    c->doc["scaleSettings"] = scale_settings_of(*c);
    save_cluster_doc(store, cluster_row_id, c->doc);
  });
}

void ClusterDocs::set_auto_scale_demand(std::int64_t cluster_row_id, int nodes) const {
  cx_.store().write([&] {
    detail::set_auto_scale_demand(cx_.store(), cluster_row_id, nodes);
  });
}

}  // namespace batchai::control_plane
