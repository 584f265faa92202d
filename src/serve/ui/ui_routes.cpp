// The dashboard door (docs/serve.md "Dashboard"): /ui and everything under it: the page's
// embedded files, the one-time login, the guard (the cookie, and for the API its session key)
// and the read-only JSON API (ui_api.hpp).
#include "ui/ui_routes.hpp"

#include <algorithm>

#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"
#include "batchai/common/json_util.hpp"
#include "door.hpp"
#include "ui/ui_api.hpp"
#include "ui/ui_assets.hpp"

namespace batchai::serve {
namespace {

constexpr std::string_view kCsp =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'; require-trusted-types-for 'script'; "
    "trusted-types 'none'";

void text_page(HttpResponse& res, int status, const std::string& text) {
  res.status = status;
  res.set_content(text + "\n", "text/plain; charset=utf-8");
}

// The API's error shape.
void api_error(HttpResponse& res, int status, const std::string& code, const std::string& message) {
  res.status = status;
  res.set_content(json_error_body(code, message).dump(), "application/json; charset=utf-8");
}

// The names this server answers to: loopback, and --host (with the port).
std::vector<std::string> own_hosts(const UiContext& ui) {
  const std::string port = ":" + std::to_string(ui.port);
  std::vector<std::string> out = {"localhost" + port, "127.0.0.1" + port, "[::1]" + port};
  const std::string host = ui.host.find(':') != std::string::npos ? "[" + ui.host + "]" : ui.host;
  out.push_back(to_lower(host) + port);
  return out;
}

bool is_own_host(const UiContext& ui, const std::string& host) {
  const auto hosts = own_hosts(ui);
  return std::find(hosts.begin(), hosts.end(), to_lower(host)) != hosts.end();
}

bool is_own_origin(const UiContext& ui, const std::string& origin) {
  constexpr std::string_view kHttps = "https://";
  if (origin.rfind(kHttps, 0) != 0) return false;
  return is_own_host(ui, origin.substr(kHttps.size()));
}

void login(const HttpRequest& req, HttpResponse& res, UiContext& ui, std::int64_t now_s) {
  const UiLoginCheck check = ui.logins.redeem(ui.identity, req.get_param_value("token"), now_s);
  if (check != UiLoginCheck::kValid) {
    const char* why = check == UiLoginCheck::kUsed      ? "This login link was used already: each works once."
                      : check == UiLoginCheck::kExpired ? "This login link expired (links last 10 minutes)."
                      : check == UiLoginCheck::kTooMany ? "Too many logins at once: try again in a few minutes."
                                                        : "This is not a login link of this server.";
    return text_page(res, 403,
                     std::string(why) + " Get a new one with: batchai serve ui-url --port " + std::to_string(ui.port));
  }
  // The session key rides in the fragment, which is never sent: the page moves it into this
  // origin's storage and out of the address at once.
  const std::string cookie = mint_ui_cookie(ui.identity, ui.port, now_s);
  res.status = 303;
  res.set_header("Location", "/ui/#key=" + ui_session_key(ui.identity, ui.port, cookie));
  res.set_header("Set-Cookie", ui_cookie_name(ui.port) + "=" + cookie +
                                   "; Path=/; Secure; HttpOnly; SameSite=Strict; Max-Age=" +
                                   std::to_string(kUiCookieLifetimeSeconds));
  res.set_header("Cache-Control", "no-store");
  res.set_content("See /ui/\n", "text/plain; charset=utf-8");
}

std::string login_cookie(const HttpRequest& req, const UiContext& ui) {
  const std::string name = ui_cookie_name(ui.port);
  for (auto [it, end] = req.headers.equal_range("Cookie"); it != end; ++it) {
    std::string value = cookie_value(it->second, name);
    if (!value.empty()) return value;
  }
  return "";
}

void asset(const HttpRequest& req, HttpResponse& res, std::string_view name) {
  const UiAsset* a = find_ui_asset(name.empty() ? "index.html" : name);
  if (a == nullptr) return text_page(res, 404, "No such dashboard file.");
  res.set_header("ETag", std::string(a->etag));
  res.set_header("Cache-Control", "no-cache");
  if (req.get_header_value("If-None-Match") == a->etag) {
    res.status = 304;
    return;
  }
  res.status = 200;
  res.set_content(std::string(reinterpret_cast<const char*>(a->data), a->size), std::string(a->content_type));
}

void dispatch(const HttpRequest& req, HttpResponse& res, UiContext& ui, std::int64_t now_s) {
  const std::string_view path(req.path);
  const bool api = path.rfind("/ui/api/", 0) == 0 || path == "/ui/api";
  if (req.method != "GET" && req.method != "HEAD") {
    res.set_header("Allow", "GET, HEAD");
    return api ? api_error(res, 405, "MethodNotAllowed", "The dashboard serves GET and HEAD only.")
               : text_page(res, 405, "The dashboard serves GET and HEAD only.");
  }
  if (path == "/ui/login") {
    // Only a GET spends a link: a HEAD (a link preview, a checker) must not.
    if (req.method != "GET") {
      res.set_header("Allow", "GET");
      return text_page(res, 405, "A login link is opened with GET.");
    }
    return login(req, res, ui, now_s);
  }
  const std::string cookie = login_cookie(req, ui);
  if (!check_ui_cookie(ui.identity, ui.port, cookie, now_s)) {
    const std::string why = "Log in first: open the link batchai serve printed, or mint one with: batchai serve ui-url --port " +
                            std::to_string(ui.port);
    return api ? api_error(res, 401, "LoginRequired", why) : text_page(res, 401, why);
  }
  if (api) {
    // The cookie reaches every port of the host; the key only this origin's page holds.
    if (!req.has_header("X-Batchai-UI"))
      return api_error(res, 403, "MissingHeader", "Dashboard API calls carry the header X-Batchai-UI.");
    if (!check_ui_session(ui.identity, ui.port, cookie, req.get_header_value("X-Batchai-UI"), now_s))
      return api_error(res, 401, "LoginRequired",
                       "This page's session key does not match its login: open a new link from batchai serve ui-url "
                       "--port " + std::to_string(ui.port) + ".");
    if (req.has_header("Origin") && !is_own_origin(ui, req.get_header_value("Origin")))
      return api_error(res, 403, "ForeignOrigin", "The request comes from another origin.");
    if (!is_own_host(ui, req.get_header_value("Host")))
      return api_error(res, 403, "ForeignHost", "The request names another host.");
    return answer_ui_api(req, res, ui, now_s);
  }
  if (path == "/ui" || path == "/ui/") {
    if (path == "/ui") {
      res.status = 308;
      res.set_header("Location", "/ui/");
      return;
    }
    return asset(req, res, "");
  }
  return asset(req, res, path.substr(4));
}

bool is_ui_request(const HttpRequest& req) { return req.path == "/ui" || req.path.rfind("/ui/", 0) == 0; }

void set_ui_security_headers(HttpResponse& res) {
  res.set_header("Content-Security-Policy", std::string(kCsp));
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_header("X-Frame-Options", "DENY");
}

// The dashboard's words where they differ from the gateway's (error_answer.hpp).
std::string ui_code(const ErrorAnswer& e) {
  switch (e.kind) {
    case ErrorKind::kNotFound: return e.code.empty() ? "NotFound" : e.code;
    case ErrorKind::kInvalid: return "InvalidParameter";
    case ErrorKind::kInternal: return "InternalError";
    default: return e.code.empty() ? gateway_code(e.kind) : e.code;
  }
}

// Its own login cookie (never the bearer token, and ARM never takes the cookie); GET and HEAD
// only, so no body. Every answer carries the dashboard's security headers.
class UiDoor final : public Door {
 public:
  explicit UiDoor(ServeState& state)
      : logins_(state.config.settings.home / "serve"),
        ui_{state.identity, state.port, state.config.host, logins_, state.pool, state.base, overview_engines_,
            jobs_engines_} {}

  // A head whose path is not known yet (a refusal before it was parsed) may be a /ui/ request:
  // this door's answer (the gateway's JSON and the dashboard's headers) suits every client.
  bool claims(const HttpRequest& head) const override { return head.path.empty() || is_ui_request(head); }
  BodyPlan admit(const HttpRequest& head) override { return refuse_any_body(*this, head); }

  void answer(HttpRequest& req, HttpResponse& res) override {
    dispatch(req, res, ui_, now_seconds());
    set_ui_security_headers(res);
  }

  void render_error(const HttpRequest*, HttpResponse& res, const ErrorAnswer& e) const override {
    if (e.from_transport) {
      reply_json_error(res, e.status, e.code.empty() ? gateway_code(e.kind) : e.code, e.message);
    } else {
      res.status = e.status;
      res.set_content(json_error_body(ui_code(e), e.message).dump(), "application/json; charset=utf-8");
    }
    set_ui_security_headers(res);
  }

 private:
  UsedUiLogins logins_;  // dashboard links already exchanged, kept in the home (ui_auth.hpp)
  RateGate overview_engines_{std::chrono::milliseconds(500)};
  RateGate jobs_engines_{std::chrono::milliseconds(500)};
  UiContext ui_;  // last: it refers to the members above
};

}  // namespace

std::unique_ptr<Door> make_ui_door(ServeState& state) { return std::make_unique<UiDoor>(state); }

}  // namespace batchai::serve
