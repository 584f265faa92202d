// spdlog sink writing "LEVEL: message" lines to stderr.
#include "batchai/common/log.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <string>

namespace batchai::log {
namespace {

std::shared_ptr<spdlog::logger>& logger() {
  static std::shared_ptr<spdlog::logger> instance = [] {
    auto l = std::make_shared<spdlog::logger>("batchai", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    l->set_pattern("%v");
    l->set_level(spdlog::level::warn);
    l->flush_on(spdlog::level::trace);
    return l;
  }();
  return instance;
}

void emit(spdlog::level::level_enum level, const char* prefix, std::string_view message) {
  if (logger()->should_log(level)) logger()->log(level, "{}{}", prefix, message);
}

}  // namespace

void init(Verbosity verbosity) {
  switch (verbosity) {
    case Verbosity::kErrorsOnly: logger()->set_level(spdlog::level::err); break;
    case Verbosity::kNormal: logger()->set_level(spdlog::level::warn); break;
    case Verbosity::kVerbose: logger()->set_level(spdlog::level::info); break;
    case Verbosity::kDebug: logger()->set_level(spdlog::level::debug); break;
  }
}

void debug(std::string_view message) { emit(spdlog::level::debug, "DEBUG: ", message); }
void info(std::string_view message) { emit(spdlog::level::info, "INFO: ", message); }
void warning(std::string_view message) { emit(spdlog::level::warn, "WARNING: ", message); }
void error(std::string_view message) { emit(spdlog::level::err, "ERROR: ", message); }

}  // namespace batchai::log
