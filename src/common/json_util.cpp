// JSON text forms, bounded file loading and range-checked integers.
#include "batchai/common/json_util.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <optional>

#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"

namespace batchai {
namespace {

// "line 3 column 5 (char 20)" of byte `offset`, the way Python's json module counts.
std::string position_text(const std::string& text, std::size_t offset) {
  if (offset > text.size()) offset = text.size();
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + " column " + std::to_string(column) + " (char " + std::to_string(offset) + ")";
}


const char* file_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
};

std::string shown(const Json& value) {
  std::string text = value.dump();
  return text.size() > 40 ? text.substr(0, 37) + "..." : text;
}

}  // namespace

std::optional<std::size_t> excess_nesting(std::string_view text, std::size_t max_depth) {
  std::size_t depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

std::string dump_azure_json(const Json& value) { return value.dump(2, ' ', true) + "\n"; }

void inject_resource_group(Json& value) {
  if (value.is_array()) {
    for (auto& item : value) inject_resource_group(item);
    return;
  }
  if (!value.is_object()) return;
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (it.key() != "sourceVault") inject_resource_group(it.value());
  }
  auto id = value.find("id");
  if (id != value.end() && id->is_string() && !value.contains("resourceGroup")) {
    if (auto parsed = parse_arm_id(id->get<std::string>())) value["resourceGroup"] = parsed->resource_group;
  }
}

Json parse_json_text(const std::string& text, const std::string& origin) {
  // Every consumer of a document (schema check, copies, output) recurses; bound the depth first.
  if (auto at = excess_nesting(text, kMaxJsonDepth)) {
    throw InvalidArgument("JSON nests deeper than " + std::to_string(kMaxJsonDepth) + " levels: " +
                          position_text(text, *at) + " in " + origin);
  }
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    // Translate the byte offset into line/column like Python's json module does.
    std::size_t offset = e.byte == 0 ? 0 : e.byte - 1;
    if (offset > text.size()) offset = text.size();
    std::string what = text.empty() || offset >= text.size() ? "Expecting value" : "Invalid JSON";
    throw InvalidArgument(what + ": " + position_text(text, offset) + " in " + origin);
  }
}

Json load_json_file(const std::filesystem::path& path) {
  const std::string quoted = "'" + path.string() + "'";
  // O_NONBLOCK: opening a FIFO without a writer must not hang; fstat then refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) throw InvalidArgument("[Errno 2] No such file or directory: " + quoted);
    throw InvalidArgument("[Errno " + std::to_string(err) + "] " + std::strerror(err) + ": " + quoted);
  }
  FdCloser closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw SystemError("Cannot read " + quoted + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw InvalidArgument("[Errno 21] Is a directory: " + quoted);
  if (!S_ISREG(st.st_mode))
    throw InvalidArgument(quoted + " is " + file_kind(st.st_mode) + "; give the path of a JSON file.");
  const std::string too_big = quoted + " is larger than " + std::to_string(kMaxJsonFileBytes) +
                              " bytes (4 MiB), the limit for JSON files; give a smaller file.";
  if (static_cast<std::uintmax_t>(st.st_size) > kMaxJsonFileBytes) throw InvalidArgument(too_big);
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw InvalidArgument("[Errno " + std::to_string(errno) + "] " + std::strerror(errno) + ": " + quoted);
    }
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > kMaxJsonFileBytes) throw InvalidArgument(too_big);  // grew while being read
  }
  return parse_json_text(text, quoted);
}

std::string json_error_text(const nlohmann::json::exception& error) {
  std::string text = error.what();
  if (text.rfind("[json.exception.", 0) == 0) {
    if (auto end = text.find("] "); end != std::string::npos) text.erase(0, end + 2);
  }
  return text;
}

std::int64_t checked_integer(const Json& value, const std::string& field, std::int64_t min, std::int64_t max) {
  const std::string range = "at least " + std::to_string(min) + " and at most " + std::to_string(max);
  if (value.is_number_unsigned()) {
    const auto u = value.get<std::uint64_t>();
    if (max >= 0 && u <= static_cast<std::uint64_t>(max) && (min <= 0 || u >= static_cast<std::uint64_t>(min)))
      return static_cast<std::int64_t>(u);
    throw InvalidArgument(field + " must be " + range + ", got " + std::to_string(u) + ".");
  }
  if (value.is_number_integer()) {
    const auto i = value.get<std::int64_t>();
    if (i >= min && i <= max) return i;
    throw InvalidArgument(field + " must be " + range + ", got " + std::to_string(i) + ".");
  }
  // Integers past 64 bits arrive as floating point: say what they are, not "1e+23".
  if (value.is_number_float() && std::fabs(value.get<double>()) >= 9.2e18)
    throw InvalidArgument(field + " must be " + range + ", got a number beyond the 64-bit integer range.");
  throw InvalidArgument(field + " must be an integer (" + range + "), got " + shown(value) + ".");
}

}  // namespace batchai
