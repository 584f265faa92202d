// Percent-encoding of names that go into URIs (RFC 3986): a path segment of an ARM link, what
// Azure Storage sends as an encoded blob name, and a file path handed to SQLite as a `file:` URI.
#pragma once
#include <string>
#include <string_view>

namespace batchai {

// `text` with every byte but the unreserved ones (letters, digits, '-', '.', '_', '~') written as
// %XX (upper-case hex): one path segment, '/' included in what is encoded.
std::string percent_encode_segment(std::string_view text);

// The same, with '/' kept: a whole path, so '?', '#', '%' and spaces stay part of the name.
std::string percent_encode_path(std::string_view text);

}  // namespace batchai
