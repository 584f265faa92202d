// JSON helpers with JMESPath semantics: truthiness, type names, deep equality (numbers by value,
// objects unordered), number ordering, and a compact Python-json.dumps-style serialiser used by
// to_string(). Private to the query module.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "batchai/query/jmespath.hpp"

namespace batchai::query::detail {

// JMESPath's false values: null, false, "", [], {} (numbers are always true).
bool is_truthy(const Json& value);

// "number", "string", "boolean", "array", "object" or "null".
const char* type_name(const Json& value);

// Deep equality: 1 == 1.0, objects compare regardless of key order, true != 1.
bool json_equal(const Json& a, const Json& b);

// Three-way comparison of two numbers (ints compare exactly, otherwise as doubles).
int compare_numbers(const Json& a, const Json& b);

// Compact JSON like Python's json.dumps(v, separators=(',', ':')): ASCII-only output with
// \uXXXX escapes and Python's float repr (1.0, 1e+16, 1e-05).
std::string python_dumps(const Json& value);

// Number of Unicode code points in a UTF-8 string (what Python's len() counts).
std::size_t utf8_length(std::string_view text);

// The string reversed code point by code point.
std::string utf8_reverse(std::string_view text);

// Python's int(text) then float(text) as used by to_number(); nullopt when neither parses.
std::optional<Json> parse_number_like_python(std::string_view text);

}  // namespace batchai::query::detail
