#include "arm/operations.hpp"

#include <chrono>

#include "batchai/common/ids.hpp"

namespace batchai::serve {
namespace {

std::string now_iso() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

void Operations::accepted(Call& call, const std::string& ns, bool async_header) {
  const std::string id = new_uuid();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    started_[id] = now_iso();
    order_.push_back(id);
    while (order_.size() > kMaxRemembered) {
      started_.erase(order_.front());
      order_.pop_front();
    }
  }
  const std::string prefix = call.base + "/subscriptions/" + subscription_id() + "/providers/" + ns + "/locations/local/";
  const std::string version = "?api-version=" + call.query("api-version");
  call.res.set_header("Location", prefix + "operationResults/" + id + version);
  if (async_header) call.res.set_header("Azure-AsyncOperation", prefix + "operationStatuses/" + id + version);
  call.res.set_header("Retry-After", "1");
  call.empty(202);
}

void Operations::poll(Call& call, bool status_kind, const std::string& id) {
  std::string started;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = started_.find(id);
    if (it != started_.end()) started = it->second;
  }
  if (started.empty()) {
    call.error(404, "OperationNotFound", "The operation was not found: it is unknown or too old.");
    return;
  }
  if (!status_kind) {  // Location: the operation has finished and has no result body
    call.empty(204);
    return;
  }
  call.json(200, {{"id", call.req.path}, {"name", id}, {"status", "Succeeded"}, {"startTime", started},
                  {"endTime", started}});
}

}  // namespace batchai::serve
