// A Slurm job's exchange folder on the shared folder (run_exchange.hpp).
#include "run_exchange.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "batchai/common/confined_path.hpp"
#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane::jobs_detail {

namespace {

// run.json holds the job document (bounded where it is accepted) and its secrets.
constexpr std::size_t kMaxInputs = 64 * 1024 * 1024;
constexpr std::size_t kMaxRecord = 1024 * 1024;

[[noreturn]] void fail_write(const fs::path& file, int err) {
  if (err == ENOSPC || err == EDQUOT)
    throw SystemError("The shared folder is full: cannot write " + file.string() + " (" + std::strerror(err) +
                          "). Free space there; the job's state in the store is unchanged.",
                      "SharedFolderFull");
  throw SystemError("Cannot write " + file.string() + ": " + std::strerror(err) +
                    ". The shared folder (BATCHAI_SHARED_DIR) must be writable.");
}

// Writes `text` through to a new temporary file beside `file` and returns its path.
fs::path write_temporary(const fs::path& file, const std::string& text, mode_t mode) {
  const fs::path tmp = file.parent_path() / ("." + file.filename().string() + "." + new_uuid());
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (!fd) fail_write(file, errno);
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::unlink(tmp.c_str());
      fail_write(file, err);
    }
    done += static_cast<std::size_t>(n);
  }
  // Written through before it gets its name: a host that dies never leaves a torn record.
  if (::fsync(fd.get()) != 0 && errno != EINVAL) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail_write(file, err);
  }
  return tmp;
}

// Replaces `file` with `text` at once (rename).
void write_replacing(const fs::path& file, const std::string& text, mode_t mode) {
  const fs::path tmp = write_temporary(file, text, mode);
  if (::rename(tmp.c_str(), file.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail_write(file, err);
  }
}

// Gives `file` the content `text` unless it has one (link fails on an existing name). True when
// this call's text is the file's.
bool write_once(const fs::path& file, const std::string& text) {
  const fs::path tmp = write_temporary(file, text, 0644);
  const bool linked = ::link(tmp.c_str(), file.c_str()) == 0;
  const int err = errno;
  ::unlink(tmp.c_str());
  if (!linked && err != EEXIST) fail_write(file, err);
  return linked;
}

// The content of a regular file of at most `max` bytes; nullopt when it is absent, not a regular
// file (a link, a FIFO) or larger.
std::optional<std::string> read_small(const fs::path& file, std::size_t max) {
  UniqueFd fd(::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!fd) return std::nullopt;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::size_t>(st.st_size) > max)
    return std::nullopt;
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  text.resize(done);
  return text;
}

std::optional<Json> read_object(const fs::path& file, std::size_t max) {
  auto text = read_small(file, max);
  if (!text) return std::nullopt;
  Json j = Json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return j;
}

}  // namespace

void RunExchange::write_inputs(const Json& inputs) const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) fail_write(dir_, ec.value());
  write_replacing(dir_ / "run.json", inputs.dump(), 0600);  // it holds the job's secrets
}

void RunExchange::write_slurm_id(std::uint64_t id) const { write_replacing(dir_ / "slurm-job-id", std::to_string(id), 0644); }

void RunExchange::request_stop() const {
  UniqueFd fd(::open((dir_ / "stop").c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!fd && errno != ENOENT) fail_write(dir_ / "stop", errno);  // ENOENT: the folder is gone, nothing runs
}

void RunExchange::forget_inputs() const { ::unlink((dir_ / "run.json").c_str()); }

std::optional<std::string> RunExchange::claim() const { return read_small(dir_ / "claim", 4096); }
std::optional<Json> RunExchange::started() const { return read_object(dir_ / "started.json", kMaxRecord); }
std::optional<Json> RunExchange::outcome() const { return read_object(dir_ / "outcome.json", kMaxRecord); }

std::string RunExchange::batch_log_tail() const {
  UniqueFd fd(::open(batch_log().c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
  std::string tail(1024, '\0');
  const off_t from = st.st_size > 1024 ? st.st_size - 1024 : 0;
  const ssize_t n = ::pread(fd.get(), tail.data(), tail.size(), from);
  tail.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.pop_back();
  tail = tail.substr(tail.find_last_of('\n') == std::string::npos ? 0 : tail.find_last_of('\n') + 1);
  std::string printable;
  for (char c : tail) printable += (c >= 0x20 && c != 0x7f) || (c & 0x80) ? c : '?';
  return printable.substr(0, 300);
}

Json RunExchange::inputs() const {
  std::error_code ec;
  if (!fs::is_directory(dir_, ec))
    throw SystemError("The job's folder " + dir_.string() +
                      " is not on this node: the shared folder (BATCHAI_SHARED_DIR) must be mounted at the same path "
                      "on every node of the partition.",
                      "SharedFolderMissing");
  auto inputs = read_object(dir_ / "run.json", kMaxInputs);
  if (!inputs) throw SystemError("The job's inputs " + (dir_ / "run.json").string() + " are missing or unreadable.");
  return *inputs;
}

std::optional<std::uint64_t> RunExchange::slurm_id() const {
  auto text = read_small(dir_ / "slurm-job-id", 32);
  if (!text || text->empty() || text->size() > 19) return std::nullopt;
  std::uint64_t id = 0;
  for (char c : *text) {
    if (c < '0' || c > '9') return std::nullopt;
    id = id * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return id;
}

bool RunExchange::try_claim(const std::string& who) const {
  UniqueFd fd(::open((dir_ / "claim").c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!fd) {
    if (errno == EEXIST) return false;
    fail_write(dir_ / "claim", errno);
  }
  const std::string text = who.substr(0, 4000);
  (void)!::write(fd.get(), text.data(), text.size());  // the name is the claim; the text only says whose
  (void)::fsync(fd.get());
  return true;
}

void RunExchange::record_started(const Json& started) const { write_replacing(dir_ / "started.json", started.dump(), 0644); }

bool RunExchange::record_outcome(const Json& outcome) const { return write_once(dir_ / "outcome.json", outcome.dump()); }

bool RunExchange::stop_requested() const {
  std::error_code ec;
  return fs::exists(dir_ / "stop", ec) || !fs::is_directory(dir_, ec);  // a deleted job's folder is gone
}

}  // namespace batchai::control_plane::jobs_detail
