// The executable's side of its plugins (plugin_loader.hpp).
#include "plugin_loader.hpp"

#include <dlfcn.h>

#include <system_error>

namespace batchai::cli {

std::string plugin_rebuild_hint(const std::filesystem::path& path, const std::string& build_target) {
  return "rebuild batchai (cmake --build <build> --target " + build_target + "), and reinstall it when it is " +
         "installed (cmake --install <build>), so that " + path.filename().string() + " is in " +
         path.parent_path().string();
}

void* load_plugin_entry(const std::filesystem::path& path, const char* entry, int dlopen_flags,
                        const std::string& build_target) {
  if (path.empty())
    throw SystemError("Cannot find the plugin " + build_target +
                      ": the path of this executable (/proc/self/exe) is unreadable.");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw SystemError("The plugin " + path.string() + " is missing: " + plugin_rebuild_hint(path, build_target) + ".");
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | dlopen_flags);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    throw SystemError("The plugin " + path.string() + " could not be loaded (" +
                      (why != nullptr ? why : "unknown reason") + "): " + plugin_rebuild_hint(path, build_target) + ".");
  }
  // Never closed: the process ends with the training or the serving.
  void* symbol = ::dlsym(handle, entry);
  if (symbol == nullptr)
    throw SystemError("The plugin " + path.string() + " has no entry point " + entry + ": " +
                      plugin_rebuild_hint(path, build_target) + ".");
  return symbol;
}

}  // namespace batchai::cli
