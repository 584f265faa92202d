#include "byte_reply.hpp"

#include <unistd.h>

#include <algorithm>

#include "storage_xml.hpp"

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
  auto start = parse_count(std::string_view(spec).substr(0, dash));
  if (!start) return std::nullopt;
  ByteRange r{*start, std::nullopt};
  if (dash + 1 < spec.size()) {
    r.end = parse_count(std::string_view(spec).substr(dash + 1));
    if (!r.end || *r.end < r.start) return std::nullopt;
  }
  return r;
}

std::string range_header(const httplib::Request& req) {
  if (req.has_header("x-ms-range")) return req.get_header_value("x-ms-range");
  return req.has_header("Range") ? req.get_header_value("Range") : "";
}

void reply_storage_error(httplib::Response& res, int status, const std::string& code, const std::string& message) {
  res.status = status;
  res.set_header("x-ms-error-code", code);
  res.set_content(storage_error_xml(code, message), "application/xml");
}

void reply_bytes(const httplib::Request& req, httplib::Response& res, std::shared_ptr<const UniqueFd> fd,
                 std::uint64_t size) {
  res.set_header("Accept-Ranges", "bytes");
  std::uint64_t start = 0;
  std::uint64_t length = size;
  res.status = 200;
  if (req.method == "GET") {
    if (auto range = parse_range(range_header(req))) {
      if (range->start >= size) {
        res.set_header("Content-Range", "bytes */" + std::to_string(size));
        return reply_storage_error(res, 416, "InvalidRange",
                                   "The range specified is invalid for the current size of the resource.");
      }
      const std::uint64_t end = std::min(range->end.value_or(size - 1), size - 1);
      res.status = 206;
      // httplib applies a plain Range header itself (offsets into the whole file, Content-Range);
      // x-ms-range is ours to apply.
      if (req.has_header("x-ms-range")) {
        start = range->start;
        length = end - start + 1;
        res.set_header("Content-Range",
                       "bytes " + std::to_string(start) + "-" + std::to_string(end) + "/" + std::to_string(size));
      }
    } else if (req.ranges.size() > 1 && !req.has_header("x-ms-range")) {
      return reply_storage_error(res, 416, "InvalidRange", "Only one range per request is served.");
    }
  }
  if (length == 0) return res.set_content("", kOctets);
  res.set_content_provider(static_cast<std::size_t>(length), kOctets,
                           [fd, start](std::size_t offset, std::size_t want, httplib::DataSink& sink) {
                             char buf[64 * 1024];
                             const std::size_t n = std::min(want, sizeof buf);
                             const ssize_t got = ::pread(fd->get(), buf, n, static_cast<off_t>(start + offset));
                             if (got <= 0) return false;
                             return sink.write(buf, static_cast<std::size_t>(got));
                           });
}

}  // namespace batchai::serve
