// The Storage REST API's XML bodies (docs/serve.md "The storage data plane"): the
// EnumerationResults of share, directory, container and blob listings, and the error body.
// Inputs are the control plane's StorageData documents (ISO times become RFC 1123).
#pragma once
#include <string>

#include "batchai/common/json_util.hpp"

namespace batchai::serve {

// Text as XML character data or an attribute value: always well-formed (ill-formed UTF-8 and
// characters XML 1.0 forbids become U+FFFD). Names that hold such characters are listed as
// Azure lists them instead: <Name Encoded="true"> with the name percent-encoded.
std::string xml_escape(const std::string& text);
// "2026-11-25T10:00:00.123456Z" -> "Wed, 25 Nov 2026 10:00:00 GMT"; "" when unreadable.
std::string iso_to_rfc1123(const std::string& iso);
std::string storage_error_xml(const std::string& code, const std::string& message);
std::string share_list_xml(const std::string& endpoint, const Json& shares);
std::string directory_list_xml(const std::string& endpoint, const std::string& share, const std::string& dir,
                               const Json& entries);
std::string container_list_xml(const std::string& endpoint, const Json& containers);
std::string blob_list_xml(const std::string& endpoint, const std::string& container, const std::string& prefix,
                          const Json& blobs);

}  // namespace batchai::serve
