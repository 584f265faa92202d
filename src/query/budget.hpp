// The memory budget of one evaluation: every deep copy the evaluator or a function makes is
// charged (an estimate of the bytes it allocates), so an expression whose result doubles at
// each step (`[@,@] | [@,@] | ...`) ends with a QueryError instead of exhausting memory.
// Borrowed values and reference lists cost nothing: only copies grow memory.
#pragma once
#include <cstddef>

#include "batchai/query/jmespath.hpp"

namespace batchai::query::detail {

// About 1 GB of real allocations at most; --query results of 10,000 jobs take a few percent.
inline constexpr std::size_t kMaxProducedBytes = std::size_t{512} * 1024 * 1024;

// Opens the account of one evaluation (on this thread) for its lifetime.
class BudgetScope {
 public:
  BudgetScope();
  ~BudgetScope();
  BudgetScope(const BudgetScope&) = delete;
  BudgetScope& operator=(const BudgetScope&) = delete;

 private:
  bool was_active_;
  std::size_t was_used_;
};

// Charges a copy of `json` (or `bytes` of new string data); throws QueryError(kInvalidValue)
// once the evaluation has produced more than kMaxProducedBytes. No-ops outside a BudgetScope.
void charge(const Json& json);
void charge_bytes(std::size_t bytes);

}  // namespace batchai::query::detail
