#include <algorithm>
#include <cctype>

#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"
#include "storage/byte_reply.hpp"  // parse_count
#include "ui/ui_api.hpp"
#include "ui/ui_api_util.hpp"

namespace batchai::serve {
namespace {

std::string required(const HttpRequest& req, const char* param) {
  if (!req.has_param(param)) throw AnswerError(400, "MissingParameter", std::string("The query parameter '") + param + "' is required.");
  return req.get_param_value(param);
}

}  // namespace

std::string ui_resource_group(const HttpRequest& req) {
  const std::string rg = required(req, "resourceGroup");
  // The service's rule for group names (workspaces.cpp): ^[-\w._]+$, at most 90 characters.
  const bool ok = !rg.empty() && rg.size() <= 90 && std::all_of(rg.begin(), rg.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_' || c == '.';
  });
  if (!ok)
    throw AnswerError(400, "InvalidParameter",
                     "resourceGroup must be 1 to 90 letters, digits, '-', '_' or '.' (the service's rule).");
  return rg;
}

std::string ui_name(const HttpRequest& req, const char* param, const char* rule_name) {
  const std::string name = required(req, param);
  try {
    validate_resource_name(name, rule_name);
  } catch (const InvalidArgument& e) {
    throw AnswerError(400, "InvalidParameter", std::string(param) + ": " + e.what());
  }
  return name;
}

control_plane::WorkspaceRef ui_workspace(const HttpRequest& req) {
  return {ui_resource_group(req), ui_name(req, "workspace", "workspace_name")};
}

control_plane::JobRef ui_job(const HttpRequest& req) {
  control_plane::JobRef ref;
  ref.where = ui_workspace(req);
  ref.experiment = ui_name(req, "experiment", "experiment_name");
  ref.name = ui_name(req, "job", "job_name");
  return ref;
}

std::optional<std::int64_t> ui_count(const HttpRequest& req, const char* param, std::int64_t max) {
  if (!req.has_param(param)) return std::nullopt;
  auto n = parse_count(req.get_param_value(param));
  if (!n || *n > static_cast<std::uint64_t>(max))
    throw AnswerError(400, "InvalidParameter",
                     std::string(param) + " must be a whole number from 0 to " + std::to_string(max) + ".");
  return static_cast<std::int64_t>(*n);
}

std::string shell_word(std::string_view text) {
  const bool plain = !text.empty() && text.find_first_not_of(
                                          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./-:=") ==
                                          std::string_view::npos;
  if (plain) return std::string(text);
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string cli_where(const control_plane::WorkspaceRef& where) {
  return " -g " + shell_word(where.resource_group) + " -w " + shell_word(where.workspace);
}

std::size_t json_size(const Json& value) { return value.dump(-1, ' ', false, Json::error_handler_t::replace).size(); }

Json trim_text(const Json& value, std::size_t max_bytes, bool* trimmed) {
  if (trimmed != nullptr) *trimmed = false;
  if (!value.is_string() || value.get_ref<const std::string&>().size() <= max_bytes) return value;
  const std::string& text = value.get_ref<const std::string&>();
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  if (trimmed != nullptr) *trimmed = true;
  return text.substr(0, cut) + "\u2026";
}

void ui_answer(HttpResponse& res, const Json& body) {
  std::string text = body.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > kUiMaxAnswerBytes)
    throw AnswerError(500, "AnswerTooLarge", "The answer would pass the dashboard's 64 KB bound.");
  res.status = 200;
  res.set_content(std::move(text), "application/json; charset=utf-8");
}

}  // namespace batchai::serve
