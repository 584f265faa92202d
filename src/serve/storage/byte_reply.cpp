#include "storage/byte_reply.hpp"

#include <unistd.h>

#include <algorithm>

#include "storage/storage_xml.hpp"

namespace batchai::serve {
namespace {
constexpr const char* kOctets = "application/octet-stream";
}  // namespace

std::optional<std::uint64_t> parse_count(std::string_view text) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  return std::stoull(std::string(text));
}

std::optional<ByteRange> parse_range(const std::string& text) {
  if (text.rfind("bytes=", 0) != 0) return std::nullopt;
  const std::string spec = text.substr(6);
  const auto dash = spec.find('-');
  if (dash == std::string::npos) return std::nullopt;
  if (dash == 0) {  // a suffix: the last N bytes
    auto n = parse_count(std::string_view(spec).substr(1));
    if (!n) return std::nullopt;
    return ByteRange{0, std::nullopt, *n};
  }
  auto start = parse_count(std::string_view(spec).substr(0, dash));
  if (!start) return std::nullopt;
  ByteRange r{*start, std::nullopt, std::nullopt};
  if (dash + 1 < spec.size()) {
    r.end = parse_count(std::string_view(spec).substr(dash + 1));
    if (!r.end || *r.end < r.start) return std::nullopt;
  }
  return r;
}

std::string range_header(const HttpRequest& req) {
  if (req.has_header("x-ms-range")) return req.get_header_value("x-ms-range");
  return req.has_header("Range") ? req.get_header_value("Range") : "";
}

const char* storage_code(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kNotFound: return "ResourceNotFound";
    case ErrorKind::kAlreadyExists: return "ResourceAlreadyExists";
    case ErrorKind::kConflict: return "Conflict";
    case ErrorKind::kInvalid:
    case ErrorKind::kMalformedHttp: return "InvalidInput";
    case ErrorKind::kInvalidRange: return "InvalidRange";
    case ErrorKind::kBodyTooLarge: return "RequestBodyTooLarge";
    case ErrorKind::kUriTooLong: return "InvalidUri";
    case ErrorKind::kHeadersTooLarge: return "RequestHeaderFieldsTooLarge";
    case ErrorKind::kBusy: return "ServerBusy";
    case ErrorKind::kDiskFull: return "InsufficientStorage";
    case ErrorKind::kInternal:
    case ErrorKind::kAnswered: break;
  }
  return "InternalError";
}

void reply_storage_error(HttpResponse& res, int status, const std::string& code, const std::string& message) {
  res.status = status;
  res.set_header("x-ms-error-code", code);
  res.set_content(storage_error_xml(code, message), "application/xml");
}

void reply_bytes(const HttpRequest& req, HttpResponse& res, std::shared_ptr<const UniqueFd> fd,
                 std::uint64_t size) {
  res.set_header("Accept-Ranges", "bytes");
  std::uint64_t start = 0;
  std::uint64_t length = size;
  res.status = 200;
  const std::string asked = range_header(req);
  if (req.method == "GET" && !asked.empty()) {
    if (asked.find(',') != std::string::npos)
      return reply_storage_error(res, 416, "InvalidRange", "Only one range per request is served.");
    if (auto range = parse_range(asked)) {  // one that cannot be read is ignored (RFC 9110 §14.2)
      const bool empty_suffix = range->suffix && *range->suffix == 0;
      if (empty_suffix || size == 0 || (!range->suffix && range->start >= size)) {
        res.set_header("Content-Range", "bytes */" + std::to_string(size));
        return reply_storage_error(res, 416, "InvalidRange",
                                   "The range specified is invalid for the current size of the resource.");
      }
      start = range->suffix ? size - std::min(*range->suffix, size) : range->start;
      const std::uint64_t end = range->suffix ? size - 1 : std::min(range->end.value_or(size - 1), size - 1);
      length = end - start + 1;
      res.status = 206;
      res.set_header("Content-Range",
                     "bytes " + std::to_string(start) + "-" + std::to_string(end) + "/" + std::to_string(size));
    }
  }
  res.set_file(FileBody{std::move(fd), start, length}, kOctets);
}

}  // namespace batchai::serve
