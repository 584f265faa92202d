// What the dashboard's routes share (ui_routes.cpp, the dashboard door; ui_api.cpp): the server's
// identity and names, the used logins and the engines' rate gates. ARM never sees the dashboard's
// cookie, and /ui/ never takes a bearer token.
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

}  // namespace batchai::serve
