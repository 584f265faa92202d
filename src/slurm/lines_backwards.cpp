// The backward line reader of lines_backwards.hpp.
#include "lines_backwards.hpp"

#include <algorithm>
#include <fstream>
#include <string>

namespace batchai::slurm {

bool for_each_line_backwards(const std::filesystem::path& path, std::size_t max_line,
                             const std::function<bool(std::string_view)>& line, std::size_t block) {
  std::ifstream in(path, std::ios::binary);
  if (!in || block == 0) return false;
  in.seekg(0, std::ios::end);
  std::streamoff pos = in.tellg();
  if (pos < 0) return false;
  std::string tail;       // the end of the line whose start lies before `pos`
  bool overlong = false;  // that line is longer than max_line: passed over
  std::string buf, whole;
  while (pos > 0) {
    const auto n = static_cast<std::size_t>(std::min<std::streamoff>(pos, static_cast<std::streamoff>(block)));
    pos -= static_cast<std::streamoff>(n);
    buf.resize(n);
    in.seekg(pos);
    if (!in.read(buf.data(), static_cast<std::streamsize>(n))) return false;
    std::size_t end = n;  // buf[.., end) continues `tail`
    for (std::size_t i = n; i-- > 0;) {
      if (buf[i] != '\n') continue;
      const std::size_t length = end - (i + 1) + tail.size();
      if (!overlong && length > 0 && length <= max_line) {
        whole.assign(buf, i + 1, end - (i + 1));
        whole += tail;
        if (!line(whole)) return true;
      }
      tail.clear();
      overlong = false;
      end = i;
    }
    if (overlong) continue;
    if (end + tail.size() > max_line) {
      overlong = true;
      tail.clear();
    } else {
      tail.insert(0, buf, 0, end);
    }
  }
  if (!overlong && !tail.empty()) line(tail);
  return true;
}

}  // namespace batchai::slurm
