// batchai and its libraries inside a container (container_bundle.hpp).
#include "batchai/runtime/container_bundle.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "batchai/common/json_util.hpp"
#include "batchai/runtime/podman.hpp"

namespace fs = std::filesystem;

namespace batchai::runtime {
namespace {

using Libraries = std::vector<std::pair<std::string, fs::path>>;

constexpr auto kLddTimeout = std::chrono::seconds(60);

// What the list depends on: each file's identity and the loader's cache, on this host.
std::string cache_key(const std::vector<fs::path>& files) {
  std::ostringstream key;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  key << host;
  auto add = [&key](const fs::path& f) {
    struct stat st {};
    if (::stat(f.c_str(), &st) != 0) {
      key << "|" << f.string() << ":missing";
      return;
    }
    key << "|" << f.string() << ":" << st.st_size << ":" << st.st_ino << ":" << st.st_mtim.tv_sec << "."
        << st.st_mtim.tv_nsec;
  };
  add("/etc/ld.so.cache");
  for (const auto& f : files) add(f);
  return key.str();
}

// A loader's name for a library: one path component, no "." or "..".
bool plain_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.size() < 256 &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                  c == '-' || c == '+';
         });
}

bool acceptable(const std::string& name, const fs::path& path) {
  std::error_code ec;
  return plain_name(name) && path.is_absolute() && fs::is_regular_file(path, ec);
}

std::optional<Libraries> read_cache(const fs::path& cache, const std::string& key) {
  std::ifstream in(cache);
  if (!in) return std::nullopt;
  try {
    const Json doc = Json::parse(in);
    if (doc.at("key").get<std::string>() != key) return std::nullopt;
    Libraries libs;
    for (const auto& e : doc.at("libraries")) {
      const std::string name = e.at(0).get<std::string>();
      const fs::path path = e.at(1).get<std::string>();
      if (!acceptable(name, path)) return std::nullopt;  // someone else's writing: never trusted
      libs.emplace_back(name, path);
    }
    return libs;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void write_cache(const fs::path& cache, const std::string& key, const Libraries& libs) {
  Json list = Json::array();
  for (const auto& [name, path] : libs) list.push_back({name, path.string()});
  const std::string text = Json{{"key", key}, {"libraries", list}}.dump() + "\n";
  const fs::path temp = cache.string() + "." + std::to_string(::getpid()) + ".tmp";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return;  // a cache that cannot be written is only slower
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  std::error_code ec;
  if (written) fs::rename(temp, cache, ec);
  if (!written || ec) fs::remove(temp, ec);
}

// ldd's list for one file: {name it is loaded by, file}, the dynamic loader under its own name.
void add_ldd(ProcessLauncher& launcher, const fs::path& file, std::map<std::string, fs::path>& out) {
  const auto listed = run_captured(launcher, {"ldd", file.string()}, kLddTimeout);
  std::istringstream lines(listed.out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string name, arrow, path;
    words >> name >> arrow >> path;
    if (arrow == "=>" && !path.empty() && path[0] == '/') out.emplace(name, path);
    else if (!name.empty() && name[0] == '/') out.emplace(fs::path(name).filename().string(), name);  // the loader
  }
}

}  // namespace

Libraries needed_libraries(ProcessLauncher& launcher, const std::vector<fs::path>& files, const fs::path& cache) {
  const std::string key = cache_key(files);
  if (auto cached = read_cache(cache, key)) return *cached;
  std::map<std::string, fs::path> found;
  for (const auto& f : files) add_ldd(launcher, f, found);
  Libraries libs;
  for (auto& [name, path] : found)
    if (acceptable(name, path)) libs.emplace_back(name, path);
  write_cache(cache, key, libs);
  return libs;
}

// Its executable, its plugins (beside it, or in <prefix>/lib/batchai) and every library they need,
// with the host's dynamic loader, under /.batchai; at batchai's own path a script that runs it
// through that loader, so plans that name batchai work unchanged. In the container the loader is
// /proc/self/exe: batchai finds its plugins beside it.
std::vector<Bind> batchai_bundle(ProcessLauncher& launcher, const fs::path& script_dir, const fs::path& cache) {
  const fs::path self = self_executable();
  const fs::path lib_dir = fs::path(kContainerBundleDir) / "lib";
  std::vector<fs::path> files = {self};
  std::error_code ec;
  const fs::path installed = self.parent_path().parent_path() / "lib" / "batchai";
  const fs::path plugins = fs::is_directory(installed, ec) ? installed : self.parent_path();
  std::vector<Bind> binds = {{self, lib_dir / "batchai", true}};
  std::vector<fs::path> found;
  for (const auto& e : fs::directory_iterator(plugins, ec))
    if (e.path().extension() == ".so" && e.is_regular_file(ec)) found.push_back(e.path());
  std::sort(found.begin(), found.end());  // one order: one cache key
  for (const auto& p : found) {
    files.push_back(p);
    binds.push_back({p, lib_dir / p.filename(), true});
  }
  std::string loader;
  for (const auto& [name, path] : needed_libraries(launcher, files, cache)) {
    binds.push_back({path, lib_dir / name, true});
    if (name.rfind("ld-linux", 0) == 0) loader = name;
  }
  if (loader.empty()) return {{self, self, true}};  // a static batchai runs as it is
  const fs::path script = script_dir / "batchai-in-container";
  std::ofstream(script) << "#!/bin/sh\nexec " << (lib_dir / loader).string() << " --library-path " << lib_dir.string()
                        << " " << (lib_dir / "batchai").string() << " \"$@\"\n";
  fs::permissions(script, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
  binds.push_back({script, self, true});
  return binds;
}

}  // namespace batchai::runtime
