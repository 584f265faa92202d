#include "batchai/slurm/parsers.hpp"

#include <charconv>
#include <limits>

#include "batchai/common/errors.hpp"

namespace batchai::slurm {
namespace {

constexpr std::size_t kMaxLine = 64 * 1024;
constexpr std::size_t kMaxNodes = 100000;

[[noreturn]] void bad(std::string_view what, std::string_view detail) {
  std::string shown;
  for (char c : detail.substr(0, 80)) shown += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  throw SystemError("Cannot read Slurm's " + std::string(what) + ": unexpected '" + shown +
                    "'. Is this a supported Slurm (20.11 or later)? See docs/slurm.md.");
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > kMaxLine) bad("output", "a line longer than 64 KiB");
    lines.push_back(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

std::string_view trim(std::string_view s) {
  constexpr std::string_view space = " \t\r\n";
  while (!s.empty() && space.find(s.front()) != std::string_view::npos) s.remove_prefix(1);
  while (!s.empty() && space.find(s.back()) != std::string_view::npos) s.remove_suffix(1);
  return s;
}

// Splits at '|' into exactly `n` fields; the last one keeps any further '|'.
std::vector<std::string_view> split_fields(std::string_view line, std::size_t n, std::string_view what) {
  std::vector<std::string_view> out;
  while (out.size() + 1 < n) {
    auto bar = line.find('|');
    if (bar == std::string_view::npos) bad(what, line);
    out.push_back(line.substr(0, bar));
    line.remove_prefix(bar + 1);
  }
  out.push_back(line);
  return out;
}

template <typename T>
T parse_number(std::string_view s, T min, T max, std::string_view what) {
  T value{};
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || value < min || value > max) bad(what, s);
  return value;
}

bool all_of(std::string_view s, bool (*ok)(char)) {
  for (char c : s)
    if (!ok(c)) return false;
  return true;
}

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
}
bool hostlist_char(char c) { return name_char(c) || c == '[' || c == ']' || c == ','; }
bool printable(char c) { return static_cast<unsigned char>(c) >= 0x20 && c != 0x7f; }

std::string node_name(std::string_view s, std::string_view what) {
  if (s.empty() || s.size() > 255 || !all_of(s, name_char)) bad(what, s);
  return std::string(s);
}

// Slurm's NodeAddr: a host name or an IPv4/IPv6 address; it is shown to users and may reach an
// ssh command line, so nothing but those characters passes, and no leading '-' (an option).
std::string node_address(std::string_view s, std::string_view what) {
  if (s.empty() || s.size() > 255 || s.front() == '-' || !all_of(s, [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == ':' ||
               c == '-';
      }))
    bad(what, s);
  return std::string(s);
}

// A job state word (upper case and '_'), optionally followed by " by UID".
std::string job_state(std::string_view s, std::string_view what) {
  std::string_view word = s.substr(0, s.find(' '));
  if (word.empty() || word.size() > 32 ||
      !all_of(word, [](char c) { return (c >= 'A' && c <= 'Z') || c == '_'; }))
    bad(what, s);
  return std::string(word);
}

std::string reason_text(std::string_view s, std::string_view what) {
  if (s.size() > 1024 || !all_of(s, printable)) bad(what, s);
  if (s == "None" || s == "(null)") return {};
  return std::string(s);
}

std::string node_list(std::string_view s, std::string_view what) {
  if (s == "(null)" || s == "None assigned") return {};
  if (s.size() > kMaxLine || !all_of(s, hostlist_char)) bad(what, s);
  return std::string(s);
}

// A job's working folder: any bytes but NUL (it may be another user's job), at most 4096.
std::string work_dir(std::string_view s, std::string_view what) {
  if (s.size() > 4096 || s.find('\0') != std::string_view::npos) bad(what, s);
  if (s == "(null)") return {};
  return std::string(s);
}

// The fields scontrol and sacct share.
JobInfo job_from_key_values(const std::map<std::string, std::string>& kv, std::string_view what,
                            std::string_view state_key, std::string_view count_key) {
  auto get = [&](std::string_view key) -> const std::string* {
    auto it = kv.find(std::string(key));
    return it == kv.end() ? nullptr : &it->second;
  };
  JobInfo job;
  const std::string* id = get("JobId");
  const std::string* state = get(state_key);
  if (id == nullptr || state == nullptr) bad(what, "a record without JobId or " + std::string(state_key));
  job.id = parse_job_id(*id);
  job.slurm_state = job_state(*state, what);
  if (auto r = get("Reason")) job.reason = reason_text(*r, what);
  if (auto e = get("ExitCode")) job.exit = parse_exit_code(*e);
  if (auto n = get(count_key)) job.node_count = parse_number<int>(*n, 0, 1000000, what);
  if (auto l = get("NodeList")) job.node_list = node_list(*l, what);
  if (auto w = get("WorkDir")) job.work_dir = work_dir(*w, what);
  return job;
}

}  // namespace

int parse_gres_gpus(std::string_view gres) {
  const std::string_view what = "generic resources (sinfo %G)";
  if (gres.empty() || gres == "(null)") return 0;
  if (gres.size() > 1024 || !all_of(gres, [](char c) { return name_char(c) || std::string_view(":(),").find(c) != std::string_view::npos; }))
    bad(what, gres);
  int gpus = 0;
  std::size_t depth = 0, start = 0;
  for (std::size_t i = 0; i <= gres.size(); ++i) {  // entries split at commas outside "(S:0,1)"
    const char c = i < gres.size() ? gres[i] : ',';
    if (c == '(') ++depth;
    if (c == ')') {
      if (depth == 0) bad(what, gres);
      --depth;
    }
    if (c != ',' || depth > 0) continue;
    std::string_view entry = gres.substr(start, i - start);
    start = i + 1;
    entry = entry.substr(0, entry.find('('));  // "gpu:a100:4(S:0-1)" -> "gpu:a100:4"
    const auto colon = entry.find(':');
    if (entry.substr(0, colon) != "gpu") continue;
    // name[:type][:count]: the count is the last field when it is a number, else 1
    const std::string_view last = colon == std::string_view::npos ? "" : entry.substr(entry.rfind(':') + 1);
    const bool numeric = !last.empty() && all_of(last, [](char d) { return d >= '0' && d <= '9'; });
    gpus += numeric ? parse_number<int>(last, 0, 1024, what) : 1;
    if (gpus > 1024) bad(what, gres);
  }
  if (depth != 0) bad(what, gres);
  return gpus;
}

std::vector<NodeInfo> parse_sinfo_nodes(std::string_view text) {
  std::vector<NodeInfo> nodes;
  for (auto line : split_lines(text)) {
    if (trim(line).empty()) continue;
    if (nodes.size() >= kMaxNodes) bad("node list (sinfo)", "more than 100000 nodes");
    auto f = split_fields(line, 6, "node list (sinfo)");
    NodeInfo n;
    n.name = node_name(f[0], "node list (sinfo)");
    std::string_view st = f[1];
    if (st.empty() || st.size() > 64 ||
        !all_of(st, [](char c) { return (c >= 'a' && c <= 'z') || c == '_' || c == '+' ||
                                        std::string_view("*~#!%$@^-").find(c) != std::string_view::npos; }))
      bad("node list (sinfo)", st);
    n.slurm_state = std::string(st);
    n.state = map_node_state(st);
    n.cpus = parse_number<int>(f[2], 0, 1000000, "node list (sinfo)");
    n.memory_mb = parse_number<std::int64_t>(f[3], 0, std::int64_t{1} << 40, "node list (sinfo)");
    n.address = node_address(f[4], "node list (sinfo)");
    n.gpus = parse_gres_gpus(f[5]);
    nodes.push_back(std::move(n));
  }
  return nodes;
}

int ExitStatus::batchai_exit_code() const { return signal != 0 ? 128 + signal : code; }

bool SlurmVersion::at_least(int want_major, int want_minor) const {
  return major > want_major || (major == want_major && minor >= want_minor);
}

ExitStatus parse_exit_code(std::string_view text) {
  auto colon = text.find(':');
  if (colon == std::string_view::npos) bad("exit code", text);
  ExitStatus e;
  e.code = parse_number<int>(text.substr(0, colon), 0, 255, "exit code");
  e.signal = parse_number<int>(text.substr(colon + 1), 0, 127, "exit code");
  return e;
}

JobOutcome outcome_of(const JobInfo& job) {
  return map_job_state(job.slurm_state, job.exit ? std::optional<int>(job.exit->batchai_exit_code()) : std::nullopt);
}

JobInfo parse_squeue_line(std::string_view line) {
  constexpr std::string_view what = "job queue (squeue)";
  const auto separator = line.rfind('\x1f');
  if (separator == std::string_view::npos) bad(what, line);
  auto f = split_fields(line.substr(0, separator), 5, what);
  JobInfo job;
  job.id = parse_job_id(f[0]);
  job.slurm_state = job_state(f[1], what);
  job.node_count = parse_number<int>(f[2], 0, 1000000, what);
  job.node_list = node_list(f[3], what);
  job.work_dir = work_dir(f[4], what);
  job.reason = reason_text(line.substr(separator + 1), what);
  return job;
}

bool is_same_job(const JobInfo& job, const std::filesystem::path& dir) {
  if (job.work_dir.empty()) return true;
  auto last = [](std::filesystem::path p) {
    while (!p.has_filename() && p.has_relative_path()) p = p.parent_path();  // "a/b/" -> "a/b"
    return p.filename();
  };
  return last(job.work_dir) == last(dir);
}

std::map<std::string, std::string> parse_key_values(std::string_view line) {
  if (line.size() > kMaxLine) bad("job record", "a line longer than 64 KiB");
  std::map<std::string, std::string> kv;
  std::string* last = nullptr;
  std::string last_key;
  while (!line.empty()) {
    auto sp = line.find(' ');
    std::string_view word = line.substr(0, sp);
    line.remove_prefix(sp == std::string_view::npos ? line.size() : sp + 1);
    if (word.empty()) continue;
    auto eq = word.find('=');
    std::string_view key = eq == std::string_view::npos ? std::string_view() : word.substr(0, eq);
    bool is_key = !key.empty() && all_of(key, [](char c) { return name_char(c) || c == ':' || c == '/'; });
    if (!is_key) {
      if (last != nullptr) *last += " " + std::string(word);  // a value with spaces
      continue;
    }
    auto [it, inserted] = kv.emplace(std::string(key), std::string(word.substr(eq + 1)));
    last = inserted ? &it->second : nullptr;
  }
  return kv;
}

JobInfo parse_scontrol_job(std::string_view line) {
  return job_from_key_values(parse_key_values(trim(line)), "job record (scontrol)", "JobState", "NumNodes");
}

std::optional<JobInfo> parse_sacct_line(std::string_view line) {
  line = trim(line);
  if (line.empty()) return std::nullopt;
  static constexpr const char* kKeys[] = {"JobId", "JobState", "ExitCode", "NodeCnt", "NodeList", "Reason"};
  std::map<std::string, std::string> kv;
  for (const char* key : kKeys) {
    const auto bar = line.find('|');
    if (bar == std::string_view::npos) bad("accounting record (sacct)", line);
    kv[key] = std::string(line.substr(0, bar));
    line.remove_prefix(bar + 1);
  }
  kv["WorkDir"] = std::string(line);  // the last field: a folder may hold '|'
  return job_from_key_values(kv, "accounting record (sacct)", "JobState", "NodeCnt");
}

std::map<std::string, std::string> parse_scontrol_config(std::string_view text) {
  std::map<std::string, std::string> config;
  for (auto line : split_lines(text)) {
    auto eq = line.find(" = ");
    if (eq == std::string_view::npos) continue;  // header ("Configuration data as of ...") and blanks
    std::string_view key = trim(line.substr(0, eq));
    if (key.empty() || !all_of(key, [](char c) { return name_char(c) || c == ' ' || c == '/'; })) continue;
    config.emplace(std::string(key), std::string(trim(line.substr(eq + 3))));
  }
  return config;
}

SlurmVersion parse_slurm_version(std::string_view text) {
  text = trim(text);
  // "slurm-wlm 22.05.8" (sinfo --version) or "22.05.8" (SLURM_VERSION)
  if (auto sp = text.rfind(' '); sp != std::string_view::npos) text.remove_prefix(sp + 1);
  auto dot = text.find('.');
  if (dot == std::string_view::npos) bad("version", text);
  auto rest = text.substr(dot + 1);
  auto dot2 = rest.find_first_of(".-");
  SlurmVersion v;
  v.major = parse_number<int>(text.substr(0, dot), 0, 999, "version");
  v.minor = parse_number<int>(rest.substr(0, dot2), 0, 99, "version");
  return v;
}

JobId parse_sbatch_parsable(std::string_view text) {
  text = trim(text);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  auto semi = text.find(';');
  auto id = text.substr(0, semi);
  if (semi != std::string_view::npos && !all_of(text.substr(semi + 1), name_char)) bad("job id (sbatch)", text);
  try {
    return parse_job_id(id);
  } catch (const InvalidArgument&) {
    bad("job id (sbatch)", text);
  }
}

JobId parse_job_id(std::string_view text) {
  JobId v{};
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || text.size() > 10 || ec != std::errc() || ptr != text.data() + text.size() || v == 0 ||
      v == std::numeric_limits<JobId>::max() || text.front() == '0')
    throw InvalidArgument("'" + std::string(text.substr(0, 20)) +
                          "' is not a Slurm job id; give a decimal number from 1 to 4294967294.");
  return v;
}

std::vector<std::string> expand_hostlist(std::string_view list, std::size_t max_names) {
  constexpr std::string_view what = "host list";
  if (list.size() > kMaxLine || !all_of(list, hostlist_char)) bad(what, list);
  std::vector<std::string> names;
  auto add = [&](std::string name) {
    if (names.size() >= max_names) bad(what, "more than " + std::to_string(max_names) + " hosts");
    names.push_back(std::move(name));
  };
  while (!list.empty()) {
    // one item: prefix[ranges]suffix or a plain name, up to the next ',' outside brackets
    auto open = list.find('[');
    auto comma = list.find(',');
    if (open == std::string_view::npos || (comma != std::string_view::npos && comma < open)) {
      add(node_name(list.substr(0, comma), what));
      list.remove_prefix(comma == std::string_view::npos ? list.size() : comma + 1);
      continue;
    }
    auto close = list.find(']', open);
    if (close == std::string_view::npos) bad(what, list);
    std::string_view prefix = list.substr(0, open);
    std::string_view ranges = list.substr(open + 1, close - open - 1);
    auto end = list.find(',', close);
    std::string_view suffix = list.substr(close + 1, end == std::string_view::npos ? std::string_view::npos
                                                                                    : end - close - 1);
    if ((!prefix.empty() && !all_of(prefix, name_char)) || (!suffix.empty() && !all_of(suffix, name_char)) ||
        ranges.empty())
      bad(what, list);
    while (!ranges.empty()) {
      auto c = ranges.find(',');
      std::string_view r = ranges.substr(0, c);
      ranges.remove_prefix(c == std::string_view::npos ? ranges.size() : c + 1);
      auto dash = r.find('-');
      std::string_view lo_s = r.substr(0, dash), hi_s = dash == std::string_view::npos ? lo_s : r.substr(dash + 1);
      auto lo = parse_number<std::uint64_t>(lo_s, 0, 999999999, what);
      auto hi = parse_number<std::uint64_t>(hi_s, lo, 999999999, what);
      if (hi - lo >= max_names) bad(what, "more than " + std::to_string(max_names) + " hosts");
      for (auto i = lo; i <= hi; ++i) {
        std::string digits = std::to_string(i);
        if (digits.size() < lo_s.size()) digits.insert(0, lo_s.size() - digits.size(), '0');  // node[01-10]
        add(node_name(std::string(prefix) + digits + std::string(suffix), what));
      }
    }
    list.remove_prefix(end == std::string_view::npos ? list.size() : end + 1);
  }
  return names;
}

}  // namespace batchai::slurm
