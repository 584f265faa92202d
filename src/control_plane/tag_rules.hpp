// Azure Resource Manager's rules for resource tags, as the service checks them: an object of at
// most 50 string values, names of 1-512 characters without < > % & \ ? /, values of at most 256.
#pragma once
#include "batchai/common/json_util.hpp"

namespace batchai::control_plane::detail {

// The tags as given when they keep the rules; InvalidArgument (code InvalidTag...) otherwise.
Json checked_tags(const Json& tags);

}  // namespace batchai::control_plane::detail
