#include "tag_rules.hpp"

#include <string>

#include "batchai/common/errors.hpp"

namespace batchai::control_plane::detail {

Json checked_tags(const Json& tags) {
  if (!tags.is_object())
    throw InvalidArgument("The tags must be an object of names and string values.", "InvalidTagFormat");
  if (tags.size() > 50)
    throw InvalidArgument("At most 50 tags may be set on a resource; " + std::to_string(tags.size()) + " were given.",
                          "InvalidTagCount");
  for (const auto& [name, value] : tags.items()) {
    if (name.empty() || name.size() > 512 || name.find_first_of("<>%&\\?/") != std::string::npos ||
        name.find_first_of(std::string("\0\r\n", 3)) != std::string::npos)
      throw InvalidArgument("The tag name '" + name.substr(0, 64) +
                                "' is invalid: 1 to 512 characters, none of < > % & \\ ? /.",
                            "InvalidTagNameCharacters");
    if (!value.is_string() || value.get_ref<const std::string&>().size() > 256)
      throw InvalidArgument("The value of tag '" + name.substr(0, 64) + "' must be a string of at most 256 characters.",
                            "InvalidTagValueLength");
  }
  return tags;
}

}  // namespace batchai::control_plane::detail
