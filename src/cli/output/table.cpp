// `-o table`: knack's generic table (_TableOutput._auto_table) over tabulate's "simple" format,
// with the column typing tabulate applies (numeric-looking strings count as numbers, as in
// the 2018 CLI whose examples docs/output.md §2.3 follows).
#include "output/table.hpp"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "batchai/common/errors.hpp"

namespace batchai::cli::output {
namespace {

constexpr const char* kTableUnavailable =
    "Table output unavailable. Use the --query option to specify an appropriate query. "
    "Use --debug for more info.";
constexpr std::size_t kMinPadding = 2;

enum class CellType { kNone, kBool, kInt, kFloat, kText };

bool is_int_text(std::string_view s) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

// Python float() accepts: [sign] digits [. digits] [e [sign] digits], inf, nan.
bool is_number_text(std::string_view s) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  std::string rest(s.substr(i));
  for (auto& c : rest) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (rest == "inf" || rest == "infinity" || rest == "nan") return true;
  std::size_t digits = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    std::size_t exp_digits = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return i == s.size();
}

CellType type_of(const TableCell& cell) {
  if (!cell.value || cell.value->is_null()) return CellType::kNone;
  const OJson& v = *cell.value;
  if (v.is_boolean()) return CellType::kBool;
  if (v.is_number_integer()) return CellType::kInt;
  if (v.is_number_float()) return CellType::kFloat;
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s.empty()) return CellType::kNone;
    if (s == "True" || s == "False") return CellType::kBool;
    if (is_int_text(s)) return CellType::kInt;
    if (is_number_text(s)) return CellType::kFloat;
  }
  return CellType::kText;
}

// tabulate's _more_generic: none < bool < int < float < text.
CellType more_generic(CellType a, CellType b) { return static_cast<int>(a) > static_cast<int>(b) ? a : b; }

std::string python_str(const OJson& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  return v.dump();
}

std::string format_g(double d) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%g", d);
  return buffer;
}

std::string format_cell(const TableCell& cell, CellType column_type) {
  if (!cell.value || cell.value->is_null()) return "";
  const OJson& v = *cell.value;
  if (column_type == CellType::kFloat && type_of(cell) != CellType::kNone && !v.is_boolean()) {
    double d = v.is_string() ? std::strtod(v.get_ref<const std::string&>().c_str(), nullptr) : v.get<double>();
    return format_g(d);
  }
  return python_str(v);
}

// Display width: one column per UTF-8 code point.
std::size_t display_width(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

// tabulate's _afterpoint: digits after the decimal point (or exponent), -1 for integers/text.
int after_point(const std::string& s) {
  if (!is_number_text(s) || is_int_text(s)) return -1;
  auto pos = s.rfind('.');
  if (pos == std::string::npos) pos = s.find_last_of("eE");
  if (pos == std::string::npos) return -1;
  return static_cast<int>(s.size() - pos - 1);
}

std::string pad_left(const std::string& s, std::size_t width) {
  std::size_t w = display_width(s);
  return w >= width ? s : std::string(width - w, ' ') + s;
}

std::string pad_right(const std::string& s, std::size_t width) {
  std::size_t w = display_width(s);
  return w >= width ? s : s + std::string(width - w, ' ');
}

bool is_skipped_key(const std::string& key) { return key == "id" || key == "type" || key == "etag"; }

std::string capitalize_first(std::string key) {
  if (!key.empty()) key[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(key[0])));
  return key;
}

// knack _auto_table_item: scalar values of an object (or Column1.. of a list, Result of a scalar).
std::vector<std::pair<std::string, OJson>> auto_table_item(const OJson& item) {
  std::vector<std::pair<std::string, OJson>> entry;
  if (item.is_object()) {
    for (auto it = item.begin(); it != item.end(); ++it) {
      if (is_skipped_key(it.key())) continue;
      const OJson& v = it.value();
      if (v.is_null() || v.is_array() || v.is_object()) continue;
      entry.emplace_back(capitalize_first(it.key()), v);
    }
  } else if (item.is_array()) {
    std::size_t col = 0;
    for (const auto& v : item) entry.emplace_back("Column" + std::to_string(++col), v);
  } else {
    entry.emplace_back("Result", item);
  }
  return entry;
}

}  // namespace

std::string tabulate_simple(const std::vector<std::string>& headers, const std::vector<std::vector<TableCell>>& rows) {
  const std::size_t ncols = headers.size();
  std::vector<std::vector<std::string>> columns(ncols);
  std::vector<bool> numeric(ncols, false);
  for (std::size_t c = 0; c < ncols; ++c) {
    CellType type = CellType::kNone;
    for (const auto& row : rows) type = more_generic(type, c < row.size() ? type_of(row[c]) : CellType::kNone);
    numeric[c] = type == CellType::kInt || type == CellType::kFloat;
    for (const auto& row : rows) columns[c].push_back(c < row.size() ? format_cell(row[c], type) : "");
    // Width: header + 2 or the widest cell; numbers line up on their decimal point.
    std::size_t width = display_width(headers[c]) + kMinPadding;
    if (numeric[c]) {
      int max_after = -1;
      for (const auto& s : columns[c]) max_after = std::max(max_after, after_point(s));
      for (auto& s : columns[c]) {
        int after = after_point(s);
        if (max_after > after) s += std::string(static_cast<std::size_t>(max_after - after), ' ');
      }
    }
    for (const auto& s : columns[c]) width = std::max(width, display_width(s));
    for (auto& s : columns[c]) s = numeric[c] ? pad_left(s, width) : pad_right(s, width);
  }
  std::string out;
  auto emit_line = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (c) out += "  ";
      out += cells[c];
    }
    out += '\n';
  };
  std::vector<std::string> header_cells(ncols), dashes(ncols);
  for (std::size_t c = 0; c < ncols; ++c) {
    std::size_t width = columns[c].empty() ? display_width(headers[c]) + kMinPadding : display_width(columns[c][0]);
    header_cells[c] = numeric[c] ? pad_left(headers[c], width) : pad_right(headers[c], width);
    dashes[c] = std::string(width, '-');
  }
  emit_line(header_cells);
  emit_line(dashes);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    std::vector<std::string> cells(ncols);
    for (std::size_t c = 0; c < ncols; ++c) cells[c] = columns[c][r];
    emit_line(cells);
  }
  out.pop_back();  // tabulate returns the table without a final newline
  return out;
}

std::string render_table(const OJson& result, const TableTransformer& transformer, bool query_active) {
  // Only the transformed rows or a lone value are new; a list result is read where it is.
  OJson owned;
  const OJson* data = &result;
  if (transformer && !query_active) {
    owned = transformer(result);
    data = &owned;
  }
  if (!data->is_array()) {
    owned = OJson::array({*data});
    data = &owned;
  }
  if (data->empty()) return "\n";
  std::vector<std::vector<std::pair<std::string, OJson>>> items;
  std::vector<std::string> headers;
  items.reserve(data->size());
  for (const auto& item : *data) {
    items.push_back(auto_table_item(item));
    for (const auto& [key, value] : items.back()) {
      if (std::find(headers.begin(), headers.end(), key) == headers.end()) headers.push_back(key);
    }
  }
  if (headers.empty()) throw Error(kTableUnavailable);
  std::vector<std::vector<TableCell>> rows;
  for (const auto& item : items) {
    std::vector<TableCell> row(headers.size());
    for (const auto& [key, value] : item) {
      auto pos = static_cast<std::size_t>(std::find(headers.begin(), headers.end(), key) - headers.begin());
      row[pos].value = value;
    }
    rows.push_back(std::move(row));
  }
  return tabulate_simple(headers, rows) + "\n";
}

}  // namespace batchai::cli::output
