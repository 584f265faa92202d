#include "access_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "batchai/common/errors.hpp"
#include "job_file_links.hpp"

namespace batchai::serve {
namespace {

constexpr std::size_t kMaxPathBytes = 512;  // of the request's path, before escaping

int open_log(const std::filesystem::path& path) {
  return ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
}

// Printable ASCII but space and backslash as is; everything else as \xHH.
void append_escaped(std::string& out, std::string_view text, std::size_t limit) {
  if (text.empty()) {
    out += '-';
    return;
  }
  for (std::size_t i = 0; i < text.size() && i < limit; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c > 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  if (text.size() > limit) out += "...";
}

}  // namespace

AccessLog::AccessLog(std::filesystem::path path, std::uint64_t max_bytes)
    : path_(std::move(path)), max_bytes_(max_bytes) {
  fd_ = open_log(path_);
  if (fd_ < 0) throw SystemError("Cannot open the access log " + path_.string() + ": " + std::strerror(errno) + ".");
  struct stat st {};
  if (::fstat(fd_, &st) == 0) size_ = static_cast<std::uint64_t>(st.st_size);
}

AccessLog::~AccessLog() {
  if (fd_ >= 0) ::close(fd_);
}

std::string AccessLog::format(const AccessEntry& e, std::chrono::system_clock::time_point at) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(at.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(us / 1000000);
  std::tm utc{};
  ::gmtime_r(&seconds, &utc);
  char stamp[64];
  std::snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<int>(us % 1000000 / 1000));
  std::string line = stamp;
  line += ' ';
  append_escaped(line, e.peer, 64);
  line += ' ';
  append_escaped(line, e.method, 16);
  line += ' ';
  if (e.path.substr(0, kJobFileLinkPrefix.size()) == kJobFileLinkPrefix)
    line += std::string(kJobFileLinkPrefix) + "(signed link)";  // a link works for anyone who has it
  else
    append_escaped(line, e.path, kMaxPathBytes);
  char tail[96];
  std::snprintf(tail, sizeof tail, " %d %llu %.3fms%s", e.status, static_cast<unsigned long long>(e.bytes),
                static_cast<double>(e.took.count()) / 1000.0, e.completed ? "" : " incomplete");
  line += tail;
  return line;
}

void AccessLog::record(const AccessEntry& entry) {
  try {
    std::string line = format(entry, std::chrono::system_clock::now());
    line += '\n';
    std::lock_guard lock(mutex_);
    if (size_ + line.size() > max_bytes_) rotate_locked();
    if (fd_ < 0) return;
    const ssize_t n = ::write(fd_, line.data(), line.size());  // O_APPEND: one line, whole
    if (n > 0) size_ += static_cast<std::uint64_t>(n);
  } catch (...) {
    // out of memory formatting a line: the line is dropped, the request is not
  }
}

// The current file becomes FILE.1 (replacing the one before); writing goes on in a new FILE.
void AccessLog::rotate_locked() {
  std::filesystem::path old = path_;
  old += ".1";
  if (::rename(path_.c_str(), old.c_str()) == 0) {
    const int fd = open_log(path_);
    if (fd >= 0) {
      ::close(fd_);
      fd_ = fd;
      size_ = 0;
      return;
    }
  }
  // It cannot rotate: it starts the file it writes over rather than grow past the bound.
  if (fd_ >= 0 && ::ftruncate(fd_, 0) == 0) {
    size_ = 0;
    return;
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace batchai::serve
