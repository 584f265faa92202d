#include "serve_main.hpp"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <thread>

#include "batchai/common/clock.hpp"
#include "batchai/common/errors.hpp"
#include "batchai/common/process.hpp"
#include "batchai/serve/server.hpp"
#include "identity.hpp"
#include "http/private_file.hpp"
#include "ui/ui_auth.hpp"

namespace batchai::serve {

namespace {

// Where a running server of the home leaves its port for `serve ui-url` (0600, like the rest of serve/).
std::filesystem::path port_file(const control_plane::Settings& settings) { return settings.home / "serve" / "port"; }

// `batchai serve ui-url`: a new one-time link signed with the home's identity, no server started.
int print_ui_url(const ServeOptions& options) {
  const auto settings = control_plane::Settings::from_environment();
  const std::filesystem::path dir = settings.home / "serve";
  // Never made here: a running server would not know an identity made after it started.
  if (!std::filesystem::exists(dir / "credentials.json")) {
    if (std::filesystem::exists(port_file(settings)))
      throw Error("No server identity under " + dir.string() +
                  " (credentials.json is gone): a running server keeps the one it started with; restart "
                  "`batchai serve` to make a new one (its former links, cookies and az logins then stop working).");
    throw Error("No server identity under " + dir.string() + " (credentials.json): start `batchai serve` with this "
                "BATCHAI_HOME first.");
  }
  int port = options.port;
  if (port <= 0) {
    std::ifstream in(port_file(settings));
    std::string text;
    if (!(in >> text) || text.size() > 5 || text.find_first_not_of("0123456789") != std::string::npos ||
        std::stoi(text) < 1 || std::stoi(text) > 65535)
      throw Error("No running server's port under " + dir.string() + ": give --port (the port batchai serve listens on).");
    port = std::stoi(text);
  }
  const Identity identity = load_or_create_identity(dir);
  std::cout << ui_login_url(identity, port, static_cast<std::int64_t>(std::time(nullptr))) << std::endl;
  return 0;
}

}  // namespace

int run_serve_main(const ServeOptions& options) {
  if (options.mode == ServeMode::kUiUrl) return print_ui_url(options);
  // SIGINT/SIGTERM are taken by one thread with sigwait; blocked before any other thread starts,
  // so every request thread inherits the mask (the launcher unblocks them in the processes it starts).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  ServerConfig config;
  config.settings = control_plane::Settings::from_environment();
  const control_plane::Settings config_home = config.settings;
  config.services = control_plane::Services{make_process_clock(), make_posix_process_launcher()};
  config.host = options.host;
  config.port = options.port;
  config.cert_file = options.cert_file;
  config.key_file = options.key_file;
  if (!options.no_access_log)
    config.access_log = options.access_log.empty() ? config_home.home / "serve" / "access.log"
                                                   : std::filesystem::path(options.access_log);
  Server server(std::move(config));

  std::cout << server.client_setup_lines() << std::flush;
  std::cerr << "batchai serve: listening on https://" << options.host << ":" << server.port()
            << " (ARM API, Microsoft.BatchAI 2018-05-01); Ctrl-C stops it." << std::endl;
  // The dashboard's link goes to stderr: stdout keeps only the lines to paste.
  const std::filesystem::path port_path = port_file(config_home);
  write_private_file(port_path, std::to_string(server.port()) + "\n");
  std::cerr << "Dashboard (one-time link, valid 10 minutes): " << server.ui_login_url() << std::endl;

  std::atomic<bool> done{false};
  std::thread waiter([&] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    if (!done) std::cerr << "batchai serve: stopping." << std::endl;
    server.stop();
  });
  const bool workers_done = server.run();
  done = true;
  // Serving ended without a signal (it cannot listen any more): wake the waiter ourselves.
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  if (!workers_done) {
    // A route still runs (a job's terminate waiting on its processes): the store's transactions
    // are atomic, so ending now loses nothing, and exiting on time is the promise.
    std::cerr << "batchai serve: stopped with a request still running; it is abandoned." << std::endl;
    std::fflush(nullptr);
    std::_Exit(0);
  }
  return 0;
}

}  // namespace batchai::serve
