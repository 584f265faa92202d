// UTF-8 checks for names that come from outside: URL paths, command lines and files that jobs
// made. Resource JSON and XML must be valid UTF-8 (JSON text cannot hold other bytes), so a name
// is either refused where it comes in or made valid where it is read back (docs/behaviour.md).
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace batchai {

// True when `text` is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
// above U+10FFFF), as nlohmann::json requires of every string it writes.
bool is_valid_utf8(std::string_view text);

// `text` with each ill-formed sequence replaced by U+FFFD (one per maximal subpart, as the
// Unicode standard recommends and nlohmann's error_handler_t::replace does); valid text unchanged.
std::string to_valid_utf8(std::string_view text);

// Length in UTF-16 code units, the unit Azure Storage counts name limits in (a character outside
// the BMP counts 2). Ill-formed bytes count one each.
std::size_t utf16_length(std::string_view text);

// Text safe to quote in a message or a table cell: valid UTF-8 with control characters (C0,
// DEL, C1) shown as \n, \t, \r or \xNN, so a name can neither break JSON nor forge a line.
std::string printable(std::string_view text);

}  // namespace batchai
