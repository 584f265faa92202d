// Answers that carry a file's bytes, shared by the storage data plane and the job output-file
// links (docs/serve.md): byte ranges as Storage reads them, Storage's XML error, and a body
// streamed from a descriptor in bounded pieces, so no file ever sits whole in memory.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "error_answer.hpp"
#include "http/http_message.hpp"

#include "batchai/common/confined_path.hpp"  // UniqueFd

namespace batchai::serve {

// An unsigned decimal of at most 19 digits (fits in 63 bits); nullopt otherwise.
std::optional<std::uint64_t> parse_count(std::string_view text);

struct ByteRange {
  std::uint64_t start = 0;
  std::optional<std::uint64_t> end;     // inclusive
  std::optional<std::uint64_t> suffix;  // "bytes=-N": the last N bytes (start and end unused)
};
// "bytes=START-END", "bytes=START-" or "bytes=-N"; nullopt for anything else (several ranges
// included).
std::optional<ByteRange> parse_range(const std::string& text);
// The request's x-ms-range, else its Range header ("" when neither).
std::string range_header(const HttpRequest& req);

// Storage's error: the status, x-ms-error-code and the XML body.
void reply_storage_error(HttpResponse& res, int status, const std::string& code, const std::string& message);
// Storage's word for each kind of error (error_answer.hpp), where the service names none.
const char* storage_code(ErrorKind kind);

// GET: the whole `size` bytes of `fd` (200) or the one range asked for by x-ms-range or Range
// (206 with Content-Range; 416 past the end or for several ranges); HEAD: the length only.
// Headers other than the body's are the caller's.
void reply_bytes(const HttpRequest& req, HttpResponse& res, std::shared_ptr<const UniqueFd> fd,
                 std::uint64_t size);

}  // namespace batchai::serve
