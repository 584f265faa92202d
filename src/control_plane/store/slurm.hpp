// Slurm's own tables (store/slurm_controllers.cpp, store/slurm_cancels.cpp): the back-off after a
// controller stayed silent, shared by every process of the home, and the Slurm jobs a terminate or
// delete could not cancel while it was. Slurm's jobs and clusters are rows of jobs and clusters
// whose engine column says 'slurm' (store/jobs.hpp, store/rows.hpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "batchai/common/json_util.hpp"
#include "store/store.hpp"

namespace batchai::control_plane::detail {

// slurm_controllers: one row per controller (`controller`: the slurm.conf a process uses, '' for
// the system's) while it is silent.
struct ControllerSilence {
  std::int64_t until_us = 0;  // no process asks it before this time
  Json entry;                 // the errors entry the silence put on its clusters and jobs
};
std::optional<ControllerSilence> controller_silence(Store& store, const std::string& controller);
void record_controller_silence(Store& store, const std::string& controller, const ControllerSilence& silence);
void forget_controller_silence(Store& store, const std::string& controller);

// slurm_cancels: Slurm jobs to cancel once their controller answers, oldest first.
struct QueuedCancel {
  std::int64_t slurm_job_id = 0;
  std::string job_key;  // empty on a cancel queued before job keys were recorded
};
std::vector<QueuedCancel> queued_cancels(Store& store, const std::string& controller);
void queue_cancel(Store& store, const std::string& controller, const QueuedCancel& cancel, std::int64_t since_us);
void forget_cancel(Store& store, const std::string& controller, std::int64_t slurm_job_id);

}  // namespace batchai::control_plane::detail
