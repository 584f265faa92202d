// `-o table` (table.cpp): knack's generic table over tabulate's "simple" layout, or the rows of a
// command's table transformer.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "output/output.hpp"

namespace batchai::cli::output {

// tabulate "simple" table; throws batchai::Error("Table output unavailable...") when no column remains.
std::string render_table(const OJson& result, const TableTransformer& transformer, bool query_active);

// A table laid out with tabulate's "simple" style: columns two spaces apart, each as wide as
// max(header + 2, widest cell), numeric columns right-aligned (decimal points lined up).
struct TableCell {
  std::optional<OJson> value;  // nullopt = missing (prints empty)
};
std::string tabulate_simple(const std::vector<std::string>& headers,
                            const std::vector<std::vector<TableCell>>& rows);

}  // namespace batchai::cli::output
