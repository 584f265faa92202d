// The dashboard's read-only JSON API, /ui/api/* (docs/dashboard.md "Dashboard"): overview, jobs,
// job, job/log, job/metrics, experiment and cluster/nodes. Every answer is at most
// kUiMaxAnswerBytes, names its `batchai` twin in "cli", leaves secrets out, and turns bytes that
// jobs wrote into valid JSON strings (U+FFFD for what is not UTF-8).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "http/http_message.hpp"

namespace batchai::serve {

struct UiContext;

constexpr std::size_t kUiMaxAnswerBytes = 64 * 1024;

// The paths its route table serves after /ui/api/, in the order docs/dashboard.md "API" lists them.
std::vector<std::string_view> ui_api_paths();
// Answers a request under /ui/api/ whose login, header, Origin and Host were checked, through the
// route table (404 NotFound for a path it lacks).
void answer_ui_api(const HttpRequest& req, HttpResponse& res, UiContext& ui, std::int64_t now_s);

}  // namespace batchai::serve
