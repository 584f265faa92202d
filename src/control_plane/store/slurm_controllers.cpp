// The slurm_controllers table (store/slurm.hpp).
#include "store/slurm.hpp"

namespace batchai::control_plane::detail {

std::optional<ControllerSilence> controller_silence(Store& store, const std::string& controller) {
  auto st = store.prepare("SELECT silent_until_us, error FROM slurm_controllers WHERE controller = ?");
  st.bind(1, controller);
  if (!st.step()) return std::nullopt;
  return ControllerSilence{st.integer(0), Json::parse(st.text(1))};
}

void record_controller_silence(Store& store, const std::string& controller, const ControllerSilence& silence) {
  store
      .prepare(
          "INSERT INTO slurm_controllers(controller, silent_until_us, error) VALUES (?, ?, ?) "
          "ON CONFLICT(controller) DO UPDATE SET silent_until_us = excluded.silent_until_us, error = excluded.error")
      .bind(1, controller)
      .bind(2, silence.until_us)
      .bind(3, silence.entry.dump())
      .run();
}

void forget_controller_silence(Store& store, const std::string& controller) {
  store.prepare("DELETE FROM slurm_controllers WHERE controller = ?").bind(1, controller).run();
}

}  // namespace batchai::control_plane::detail
