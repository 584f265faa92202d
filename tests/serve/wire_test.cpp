// ARM's wire form of the control plane's documents (src/serve/wire.hpp): the SDK deserializes
// durations as ISO 8601 only.
#include <gtest/gtest.h>

#include "arm/wire.hpp"

namespace batchai::serve {
namespace {

using std::chrono::hours;
using std::chrono::microseconds;
using std::chrono::minutes;
using std::chrono::seconds;

TEST(ServeWire, IsoDurations) {
  EXPECT_EQ(iso_duration(hours(24 * 7)), "P7D");
  EXPECT_EQ(iso_duration(hours(1) + minutes(30)), "PT1H30M");
  EXPECT_EQ(iso_duration(hours(26) + seconds(5)), "P1DT2H5S");
  EXPECT_EQ(iso_duration(microseconds(500000)), "PT0.500000S");
  EXPECT_EQ(iso_duration(microseconds(0)), "PT0S");
  EXPECT_EQ(iso_duration(microseconds(-5)), "PT0S");
}

TEST(ServeWire, JobWallClockTimeGoesOutAsIso) {
  const Json doc = {{"id", "/x"}, {"name", "j"}, {"resourceGroup", "rg"},
                    {"constraints", {{"maxWallClockTime", "7 days, 0:00:00"}}}};
  const Json wire = to_wire(doc);
  EXPECT_EQ(wire["properties"]["constraints"]["maxWallClockTime"], "P7D");
  EXPECT_FALSE(wire.contains("resourceGroup"));
  // Text the control plane would never write is passed through, not refused.
  const Json odd = to_wire({{"constraints", {{"maxWallClockTime", "soon"}}}});
  EXPECT_EQ(odd["properties"]["constraints"]["maxWallClockTime"], "soon");
}

}  // namespace
}  // namespace batchai::serve
