// The dashboard's read-only JSON API, /ui/api/* (docs/serve.md "Dashboard"): overview, jobs,
// job, job/log, job/metrics, experiment and cluster/nodes. Every answer is at most
// kUiMaxAnswerBytes, names its `batchai` twin in "cli", leaves secrets out, and turns bytes that
// jobs wrote into valid JSON strings (U+FFFD for what is not UTF-8).
#pragma once
#include <cstddef>
#include <cstdint>

#include "http/http_message.hpp"

namespace batchai::serve {

struct UiContext;

constexpr std::size_t kUiMaxAnswerBytes = 64 * 1024;

// Answers a request under /ui/api/ whose login, header, Origin and Host were checked.
void answer_ui_api(const HttpRequest& req, HttpResponse& res, UiContext& ui, std::int64_t now_s);

}  // namespace batchai::serve
