// The public Azure regions and ARM's location matching (location_rules.hpp). The list is the
// physical regions of the public cloud (`az account list-locations`, regionType Physical);
// logical ones ("global", "us", "europe") and the sovereign clouds' regions are not in it.
#include "location_rules.hpp"

#include <algorithm>
#include <cctype>

#include "batchai/common/errors.hpp"
#include "batchai/common/utf8.hpp"

namespace batchai::control_plane::detail {

const std::vector<std::string_view>& azure_regions() {
  static const std::vector<std::string_view> kRegions = {
      "eastus",          "eastus2",         "southcentralus",     "westus2",           "westus3",
      "australiaeast",   "southeastasia",   "northeurope",        "swedencentral",     "uksouth",
      "westeurope",      "centralus",       "southafricanorth",   "centralindia",      "eastasia",
      "indonesiacentral", "japaneast",      "japanwest",          "koreacentral",      "malaysiawest",
      "newzealandnorth", "canadacentral",   "austriaeast",        "belgiumcentral",    "chilecentral",
      "francecentral",   "germanywestcentral", "italynorth",      "mexicocentral",     "norwayeast",
      "polandcentral",   "spaincentral",    "switzerlandnorth",   "uaenorth",          "brazilsouth",
      "israelcentral",   "qatarcentral",    "northcentralus",     "westus",            "westcentralus",
      "australiacentral", "australiacentral2", "australiasoutheast", "brazilsoutheast", "canadaeast",
      "francesouth",     "germanynorth",    "jioindiacentral",    "jioindiawest",      "koreasouth",
      "norwaywest",      "southafricawest", "southindia",         "swedensouth",       "switzerlandwest",
      "uaecentral",      "ukwest",          "westindia"};
  return kRegions;
}

std::string canonical_location(const std::string& location, std::string_view resource_type) {
  // ARM's own normalisation: spaces dropped, letters lower-cased; nothing else is forgiven
  // (a tab or a newline is part of the name, and no region has one).
  std::string key;
  for (char c : location)
    if (c != ' ') key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (key.empty()) throw InvalidArgument("Please provide a location, e.g. --location eastus.", "LocationRequired");
  const auto& regions = azure_regions();
  if (std::find(regions.begin(), regions.end(), key) != regions.end()) return key;
  std::string list;
  for (auto r : regions) list += (list.empty() ? "" : ",") + std::string(r);
  const std::string shown = printable(location.size() > 100 ? location.substr(0, 100) + "..." : location);
  if (resource_type == kResourceGroupType)
    throw InvalidArgument("The provided location '" + shown +
                              "' is not available for resource group. List of available regions is '" + list + "'.",
                          "LocationNotAvailableForResourceGroup");
  throw InvalidArgument("The provided location '" + shown + "' is not available for resource type '" +
                            std::string(resource_type) + "'. List of available regions for the resource type is '" +
                            list + "'.",
                        "LocationNotAvailableForResourceType");
}

}  // namespace batchai::control_plane::detail
