// What the dashboard API's endpoints share (ui_api.cpp, ui_job_output.cpp): its errors, the
// checked query parameters, shell quoting for the "cli" twins and the bounded JSON answer.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "batchai/common/json_util.hpp"
#include "batchai/control_plane/jobs.hpp"
#include "error_answer.hpp"  // AnswerError: a status and code of the API's own
#include "http/http_message.hpp"

namespace batchai::control_plane {
class ControlPlane;
}

namespace batchai::serve {

struct UiContext;

// Query parameters naming resources, checked with the service's name rules (400 otherwise).
std::string ui_resource_group(const HttpRequest& req);
std::string ui_name(const HttpRequest& req, const char* param, const char* rule_name);
control_plane::WorkspaceRef ui_workspace(const HttpRequest& req);
control_plane::JobRef ui_job(const HttpRequest& req);
// An optional non-negative integer parameter (400 when present and not one, or above `max`).
std::optional<std::int64_t> ui_count(const HttpRequest& req, const char* param, std::int64_t max);

// `text` as one shell word (quoted when it holds anything but plain characters).
std::string shell_word(std::string_view text);
// " -g RG -w WS" and so on.
std::string cli_where(const control_plane::WorkspaceRef& where);

// Dumps `body` (invalid UTF-8 replaced); a 500 when it would pass kUiMaxAnswerBytes, which
// every endpoint bounds itself before.
void ui_answer(HttpResponse& res, const Json& body);
std::size_t json_size(const Json& value);
// A string value cut to at most `max_bytes` (at a UTF-8 boundary, "…" appended) and whether it
// was; anything else unchanged. Text of the user's (a command line, an error) is trimmed, not refused.
Json trim_text(const Json& value, std::size_t max_bytes, bool* trimmed = nullptr);

// The job's endpoints that read what it wrote (ui_job_output.cpp).
Json ui_job_log(const HttpRequest& req, UiContext& ui);
Json ui_job_metrics(const HttpRequest& req, UiContext& ui);
Json ui_experiment(const HttpRequest& req, UiContext& ui);
// The model files of the job's manifest that resolve inside its mounts, each with a signed link.
// `plane`: the request's control plane (one per request: the pool grows no further than the workers).
Json ui_manifest_files(UiContext& ui, control_plane::ControlPlane& plane, const control_plane::JobRef& job,
                       std::int64_t now_s);

}  // namespace batchai::serve
