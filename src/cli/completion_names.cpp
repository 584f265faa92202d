// The store's names for completion (completion_names.hpp): the arguments checked here, the names
// read by the control plane's read-only store entry (batchai/control_plane/stored_names.hpp), and
// only names a shell can take as words printed.
#include "completion_names.hpp"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "batchai/control_plane/control_plane.hpp"
#include "batchai/control_plane/stored_names.hpp"

namespace batchai::cli {
namespace {

constexpr std::size_t kMaxArgument = 1024;  // longer than any valid name: nothing to complete
constexpr std::size_t kDisplayLimit = 1000;

std::string ascii_lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

// A name the shell can offer as one word: printable ASCII, no blank, quote, backslash, expansion
// or glob character (the completion splits the output on newlines, unquoted).
bool shell_word(const std::string& name) {
  if (name.empty()) return false;
  for (unsigned char c : name)
    if (c <= ' ' || c >= 0x7f || std::strchr("'\"\\`$*?[]{}~!&;|<>()", c) != nullptr) return false;
  return true;
}

std::filesystem::path store_file() {
  try {
    return control_plane::Settings::from_environment().home / "state.db";
  } catch (const std::exception&) {
    return {};  // a malformed setting: nothing to complete
  }
}

}  // namespace

int complete_names(int argc, char** argv) {
  if (argc < 4) return 2;
  const std::optional<int> needed = control_plane::stored_name_parents(argv[2]);
  if (!needed) return 2;
  const std::string prefix = argv[3];
  std::vector<std::string> parents;
  for (int i = 4; i < argc; ++i) parents.emplace_back(ascii_lower(argv[i]));
  if (static_cast<int>(parents.size()) < *needed || prefix.size() > kMaxArgument) return 0;
  for (int i = 0; i < *needed; ++i)
    if (parents[static_cast<std::size_t>(i)].empty() || parents[static_cast<std::size_t>(i)].size() > kMaxArgument) return 0;

  const std::filesystem::path db = store_file();
  std::error_code ec;
  if (db.empty() || !std::filesystem::is_regular_file(db, ec)) return 0;
  std::string out;
  for (const std::string& name : control_plane::stored_names(db, argv[2], parents, prefix, kDisplayLimit))
    if (shell_word(name)) out += name + "\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace batchai::cli
