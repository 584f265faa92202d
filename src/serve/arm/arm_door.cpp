// The ARM door (docs/serve.md "Doors"): every request no other door claims. It authenticates
// with the bearer token its token endpoint issues (the discovery and token routes go without
// one), routes through the ARM route table (arm_route_table.hpp) and answers errors as ARM does.
#include <cstdint>

#include "arm/arm_routes.hpp"
#include "arm/auth_routes.hpp"
#include "arm/call.hpp"
#include "arm/operations.hpp"
#include "arm/wire_cache.hpp"
#include "door.hpp"

namespace batchai::serve {
namespace {

// The token endpoint's form (client id, secret, scope) is read before any credential is checked:
// a few hundred bytes in practice, so a small bound keeps what an anonymous client can make the
// server hold small.
constexpr std::uint64_t kTokenBodyLimit = 16 * 1024;

// A well-formed method no route serves (TRACE, CONNECT, BREW): ARM's 405 before any check.
bool is_unserved_method(const std::string& method) {
  for (const char* served : {"GET", "HEAD", "PUT", "POST", "DELETE", "PATCH", "OPTIONS"})
    if (method == served) return false;
  return true;
}

class ArmDoor final : public Door {
 public:
  explicit ArmDoor(ServeState& state) : state_(state) {}

  bool claims(const HttpRequest&) const override { return true; }

  BodyPlan admit(const HttpRequest& head) override {
    if (is_unserved_method(head.method)) return refuse_any_body(*this, head);
    HttpResponse res;
    Call call(head, res, state_.base);
    BodyPlan plan;
    plan.limit = state_.config.limits.max_body_bytes;
    if (is_auth_route(call)) {
      if (!call.is({"adfs", "oauth2", "token"})) return refuse_any_body(*this, head);
      plan.limit = kTokenBodyLimit;
    } else if (!check_bearer(call, state_.identity)) {
      plan.refuse = std::move(res);
    }
    return plan;
  }

  void answer(HttpRequest& req, HttpResponse& res) override {
    Call call(req, res, state_.base);
    if (is_unserved_method(req.method)) return call.error(405, "MethodNotAllowed", "The method is not served.");
    if (handle_auth_route(call, state_.identity)) return;
    if (!check_bearer(call, state_.identity)) return;
    auto lease = state_.pool.borrow();
    ArmContext ctx{*lease, operations_, state_.identity, job_wire_};
    handle_arm(call, ctx);
  }

  void render_error(const HttpRequest*, HttpResponse& res, const ErrorAnswer& e) const override {
    reply_json_error(res, e.status, e.code.empty() ? gateway_code(e.kind) : e.code, e.message);
  }

 private:
  ServeState& state_;
  Operations operations_;
  WireCache job_wire_;  // jobs' wire text for GET …/jobs (wire_cache.hpp), shared by every worker
};

}  // namespace

std::unique_ptr<Door> make_arm_door(ServeState& state) { return std::make_unique<ArmDoor>(state); }

}  // namespace batchai::serve
