// One HTTP exchange as the routes see it, apart from the transport that carries it
// (http_server.hpp): the request's method, decoded path, query and headers with its body (held
// in memory, or spooled to an unlinked file for a Put Blob), and the answer the routes build
// (a status, headers and a body held in memory or streamed from a file descriptor).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "batchai/common/confined_path.hpp"  // UniqueFd

namespace batchai::serve {

// Header names compare case-insensitively (RFC 9110 §5.1).
struct HeaderNameLess {
  bool operator()(const std::string& a, const std::string& b) const;
};
using Headers = std::multimap<std::string, std::string, HeaderNameLess>;

// A request body spooled to disk while it was read (an unlinked file, gone when closed), with
// the MD5 of its bytes, taken on the way.
struct SpooledBody {
  UniqueFd fd;
  std::uint64_t size = 0;
  std::string md5;  // raw 16 bytes
  int write_error = 0;  // errno of a write that failed while spooling (ENOSPC: the disk is full)
};

struct HttpRequest {
  std::string method;
  std::string target;  // as sent: path and query
  std::string path;    // percent-decoded (may hold any byte; routes check what they use)
  std::multimap<std::string, std::string> params;  // the query, decoded ('+' is a space)
  Headers headers;
  std::string body;                     // in memory (at most the route's limit)
  std::shared_ptr<SpooledBody> spooled;  // instead of `body` for a spooled upload
  std::string peer;                     // the client's address

  bool has_header(std::string_view name) const;
  // The first value of `name`; "" when absent.
  std::string get_header_value(std::string_view name) const;
  bool has_param(std::string_view name) const;
  std::string get_param_value(std::string_view name) const;
};

// A body streamed from `fd`: `length` bytes from `offset`, read in bounded pieces as the
// client takes them, so no file sits whole in memory.
struct FileBody {
  std::shared_ptr<const UniqueFd> fd;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

struct HttpResponse {
  int status = 200;
  Headers headers;
  std::string body;
  std::optional<FileBody> file;  // instead of `body`
  bool close = false;            // end the connection after this answer

  void set_header(const std::string& name, const std::string& value);
  void set_content(std::string content, const std::string& content_type);
  void set_file(FileBody body, const std::string& content_type);
};

// Splits a request target into its decoded path and query; false when either is malformed.
bool split_target(std::string_view target, std::string& path, std::multimap<std::string, std::string>& params);

}  // namespace batchai::serve
