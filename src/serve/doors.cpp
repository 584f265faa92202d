// The doors in the order the server asks them, and what they share (see door.hpp).
#include "door.hpp"

#include <ctime>

namespace batchai::serve {

Doors make_doors(ServeState& state) {
  Doors doors;
  doors.push_back(make_storage_door(state));    // Host: ACCOUNT.file|blob.core.localhost
  doors.push_back(make_job_files_door(state));  // /batchai-files/...: a signed link
  doors.push_back(make_ui_door(state));         // /ui and /ui/...: the dashboard's cookie
  doors.push_back(make_arm_door(state));        // everything else: ARM's bearer token
  return doors;
}

Door& door_for(const Doors& doors, const HttpRequest& head) {
  for (const auto& door : doors)
    if (door->claims(head)) return *door;
  return *doors.back();  // ARM claims every request; this is for a list made without it
}

BodyPlan refuse_any_body(const Door& door, const HttpRequest& head) {
  HttpResponse res;
  door.render_error(&head, res,
                    {413, ErrorKind::kBodyTooLarge, "", "This request takes no body: send it without one.", true});
  res.close = true;
  BodyPlan plan;
  plan.refuse = std::move(res);
  return plan;
}

std::int64_t now_seconds() { return static_cast<std::int64_t>(std::time(nullptr)); }

}  // namespace batchai::serve
