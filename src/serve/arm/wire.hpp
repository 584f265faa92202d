// The control plane's documents are what az prints: ARM resources flattened (their properties at
// the top, "resourceGroup" added). On the wire ARM nests them under "properties"; this undoes it.
#pragma once
#include <string>

#include "batchai/common/clock.hpp"
#include "batchai/common/json_util.hpp"

namespace batchai::serve {

// id, name, type, location, tags, sku, kind, identity, etag, managedBy stay at the top; the
// rest goes under "properties" (merged with one already there); "resourceGroup" is dropped;
// constraints.maxWallClockTime becomes ISO 8601, as the SDK reads it. Taken by value: pass
// std::move(doc) where the document is not needed after, and nothing is copied.
Json to_wire(Json doc);
// An ISO 8601 duration as ARM writes one: "P7D", "PT1H30M", "PT0.5S", "PT0S" (negative: zero).
std::string iso_duration(Micros d);
// {"value": [to_wire(each)]} for a list of documents.
Json to_wire_list(Json docs);
// A job's output file: name, fileType and downloadUrl at the top, the rest under "properties".
Json output_file_to_wire(Json entry);

}  // namespace batchai::serve
