// The dashboard under /ui/ (docs/serve.md "Dashboard"): the page's embedded files, the one-time
// login, the guard (the cookie, and for the API its session key) and the read-only JSON API. Answered before the bearer
// check and apart from ARM: ARM never sees the cookie, and /ui/ never takes a bearer token.
#pragma once
#include <cstdint>
#include <string>

#include "control_plane_pool.hpp"
#include "http/http_message.hpp"
#include "ui/rate_gate.hpp"
#include "ui/ui_auth.hpp"

namespace batchai::serve {

struct UiContext {
  const Identity& identity;
  int port;
  std::string host;           // --host, also accepted as Host and Origin
  UsedUiLogins& logins;
  ControlPlanePool& pool;
  std::string base;           // https://localhost:PORT (file links)
  // The overview and the job list ask the engines (Slurm) when these allow it: at most twice a
  // second for the whole server, however many tabs poll; otherwise they show the stored state.
  RateGate& overview_engines;
  RateGate& jobs_engines;
};

// /ui and everything under /ui/.
bool is_ui_request(const HttpRequest& req);
// Answers it, never throwing: every answer carries the dashboard's security headers.
void handle_ui(const HttpRequest& req, HttpResponse& res, UiContext& ui, std::int64_t now_s);

// The headers every /ui/ answer carries (CSP with Trusted Types, nosniff, no referrer, no frames).
void set_ui_security_headers(HttpResponse& res);

}  // namespace batchai::serve
