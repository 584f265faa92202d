// Locations as Azure Resource Manager takes them: one of the public Azure regions
// (docs/behaviour.md "Locations"), matched without regard to case or spaces and stored the way
// ARM stores them ("East US 2" -> "eastus2"). Anything else is refused before it is stored.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace batchai::control_plane::detail {

inline constexpr std::string_view kResourceGroupType = "Microsoft.Resources/resourceGroups";

// The region names (lower case, no spaces) in the order ARM lists them in its errors.
const std::vector<std::string_view>& azure_regions();

// The stored form of `location` for a resource of `resource_type`. InvalidArgument with ARM's
// code otherwise: LocationRequired when empty, LocationNotAvailableForResourceGroup (groups) or
// LocationNotAvailableForResourceType (everything else) for a name that is no region.
std::string canonical_location(const std::string& location, std::string_view resource_type);

}  // namespace batchai::control_plane::detail
