// A door of `batchai serve`: one API the server answers on its port (docs/serve.md "Doors"): the
// storage data plane, the job file links, the dashboard and ARM. The server asks its doors in
// order which one claims a request (doors.cpp), as the trainer asks its communicators; that
// door answers the whole of it: how it authenticates, its route table, how it renders errors.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "batchai/serve/server.hpp"
#include "control_plane_pool.hpp"
#include "error_answer.hpp"
#include "http/http_server.hpp"

namespace batchai::serve {

// What every door may use of the server; owned by it, outliving the doors.
struct ServeState {
  ServerConfig config;
  Identity identity;
  ControlPlanePool pool;
  int port = 0;
  std::string base;  // https://localhost:PORT, set once the port is bound

  explicit ServeState(ServerConfig c) : config(std::move(c)), pool(config.settings, config.services) {}
};

class Door {
 public:
  virtual ~Door() = default;
  // Whether this door answers the request, from its head alone (Host, method, path).
  virtual bool claims(const HttpRequest& head) const = 0;
  // For a request with a body, from the head alone: its credentials (a refusal is answered
  // before a byte of the body is read) and how much body it may send.
  virtual BodyPlan admit(const HttpRequest& head) = 0;
  // Answers through the door's route table; may throw (the server renders it with render_error).
  virtual void answer(HttpRequest& req, HttpResponse& res) = 0;
  // `error` in this door's API's shape; `req` is null when no head was parsed.
  virtual void render_error(const HttpRequest* req, HttpResponse& res, const ErrorAnswer& error) const = 0;
};

using Doors = std::vector<std::unique_ptr<Door>>;

std::unique_ptr<Door> make_storage_door(ServeState& state);
std::unique_ptr<Door> make_job_files_door(ServeState& state);
std::unique_ptr<Door> make_ui_door(ServeState& state);
std::unique_ptr<Door> make_arm_door(ServeState& state);

// The doors in the order the server asks them: those whose requests are unmistakable (a storage
// Host, a link's prefix, /ui/) first; ARM, which claims whatever they do not, last.
Doors make_doors(ServeState& state);
// The first door that claims the request (ARM when no other does).
Door& door_for(const Doors& doors, const HttpRequest& head);

// A door that takes no body refuses one from its head: 413 RequestEntityTooLarge, rendered by
// `door`, the connection closed after it.
BodyPlan refuse_any_body(const Door& door, const HttpRequest& head);
// What a request's credentials allow is decided against this clock (seconds since the epoch).
std::int64_t now_seconds();

}  // namespace batchai::serve
