#include "http/access_log.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "batchai/common/errors.hpp"

namespace batchai::serve {
namespace {

constexpr std::size_t kMaxPathBytes = 512;  // of the request's path, before escaping

// O_NONBLOCK only for the open (a FIFO without a reader fails with ENXIO instead of waiting for
// one); writes then block as usual, on the writer thread.
int open_log(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
  if (fd >= 0) {
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  }
  return fd;
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

struct AccessLog::State {
  std::filesystem::path path;
  std::uint64_t max_bytes = 0;
  std::size_t max_queued_bytes = 0;
  int fd = -1;            // the writer thread's alone once it runs
  std::uint64_t size = 0;  // likewise

  std::mutex mutex;
  std::condition_variable wake, finished;
  std::deque<std::string> lines;
  std::size_t queued_bytes = 0;
  std::uint64_t dropped = 0, unreported = 0;
  bool stop = false, done = false;

  ~State() {
    if (fd >= 0) ::close(fd);
  }
  void write_line(const std::string& line);
  void rotate();
  void run();
};

AccessLog::AccessLog(std::filesystem::path path, std::uint64_t max_bytes, std::size_t max_queued_bytes,
                     std::vector<std::string> secret_path_prefixes)
    : state_(std::make_shared<State>()), secret_path_prefixes_(std::move(secret_path_prefixes)) {
  State& st = *state_;
  st.path = std::move(path);
  st.max_bytes = max_bytes;
  st.max_queued_bytes = max_queued_bytes;
  st.fd = open_log(st.path);
  if (st.fd < 0) throw SystemError("Cannot open the access log " + st.path.string() + ": " + std::strerror(errno) + ".");
  struct stat info {};
  if (::fstat(st.fd, &info) == 0) st.size = static_cast<std::uint64_t>(info.st_size);
  writer_ = std::thread([state = state_] { state->run(); });
}

AccessLog::~AccessLog() {
  std::unique_lock lock(state_->mutex);
  state_->stop = true;
  state_->wake.notify_one();
  const bool finished = state_->finished.wait_for(lock, kDrainWait, [&] { return state_->done; });
  lock.unlock();
  if (finished) {
    writer_.join();
  } else {
    writer_.detach();  // blocked in write(): it holds its own reference to the state
  }
}

void AccessLog::record(const AccessEntry& entry) {
  try {
    std::string line = format(entry, std::chrono::system_clock::now(), secret_path_prefixes_);
    line += '\n';
    std::lock_guard lock(state_->mutex);
    if (state_->queued_bytes + line.size() > state_->max_queued_bytes) {
      ++state_->dropped;
      ++state_->unreported;
    } else {
      state_->queued_bytes += line.size();
      state_->lines.push_back(std::move(line));
    }
    state_->wake.notify_one();
  } catch (...) {
    // out of memory formatting a line: the line is dropped, the request is not
  }
}

std::uint64_t AccessLog::dropped() const {
  std::lock_guard lock(state_->mutex);
  return state_->dropped;
}

void AccessLog::State::run() {
  // A write to a pipe whose reader left must fail with EPIPE, not end the server.
  sigset_t pipe_signal;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
  std::unique_lock lock(mutex);
  for (;;) {
    wake.wait(lock, [&] { return stop || !lines.empty() || unreported > 0; });
    if (stop && lines.empty() && unreported == 0) break;
    std::deque<std::string> batch;
    batch.swap(lines);
    queued_bytes = 0;
    const std::uint64_t lost = unreported;
    unreported = 0;
    lock.unlock();
    try {
      if (lost > 0) {
        std::string note = format({"-", "-", "(access-log)", 0, lost, {}}, std::chrono::system_clock::now());
        write_line(note + " " + std::to_string(lost) + " lines dropped: the log could not keep up\n");
      }
    } catch (...) {
    }
    for (const std::string& line : batch) write_line(line);
    lock.lock();
  }
  done = true;
  finished.notify_all();
}

void AccessLog::State::write_line(const std::string& line) {
  if (size + line.size() > max_bytes) rotate();
  if (fd < 0) return;
  const ssize_t n = ::write(fd, line.data(), line.size());  // O_APPEND: one line, whole
  if (n > 0) size += static_cast<std::uint64_t>(n);
}

std::string AccessLog::format(const AccessEntry& e, std::chrono::system_clock::time_point at,
                              std::span<const std::string> secret_path_prefixes) {
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
  const auto secret = std::find_if(secret_path_prefixes.begin(), secret_path_prefixes.end(),
                                   [&](const std::string& prefix) { return e.path.starts_with(prefix); });
  if (secret != secret_path_prefixes.end())
    line += *secret + "(signed link)";  // a link works for anyone who has it
  else
    append_escaped(line, e.path, kMaxPathBytes);
  char tail[96];
  std::snprintf(tail, sizeof tail, " %d %llu %.3fms%s", e.status, static_cast<unsigned long long>(e.bytes),
                static_cast<double>(e.took.count()) / 1000.0, e.completed ? "" : " incomplete");
  line += tail;
  return line;
}

// The current file becomes FILE.1 (replacing the one before); writing goes on in a new FILE.
void AccessLog::State::rotate() {
  std::filesystem::path old = path;
  old += ".1";
  if (::rename(path.c_str(), old.c_str()) == 0) {
    const int fresh = open_log(path);
    if (fresh >= 0) {
      ::close(fd);
      fd = fresh;
      size = 0;
      return;
    }
  }
  // It cannot rotate: it starts the file it writes over rather than grow past the bound.
  if (fd >= 0 && ::ftruncate(fd, 0) == 0) {
    size = 0;
    return;
  }
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace batchai::serve
