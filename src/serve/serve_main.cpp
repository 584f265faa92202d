#include "serve_main.hpp"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "batchai/common/clock.hpp"
#include "batchai/common/process.hpp"
#include "batchai/serve/server.hpp"

namespace batchai::serve {

int run_serve_main(const ServeOptions& options) {
  // SIGINT/SIGTERM are taken by one thread with sigwait; blocked before any other thread starts,
  // so every request thread inherits the mask (the launcher unblocks them in the processes it starts).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  ServerConfig config;
  config.settings = control_plane::Settings::from_environment();
  config.services = control_plane::Services{make_process_clock(), make_posix_process_launcher()};
  config.host = options.host;
  config.port = options.port;
  config.cert_file = options.cert_file;
  config.key_file = options.key_file;
  Server server(std::move(config));

  std::cout << server.client_setup_lines() << std::flush;
  std::cerr << "batchai serve: listening on https://" << options.host << ":" << server.port()
            << " (ARM API, Microsoft.BatchAI 2018-05-01); Ctrl-C stops it." << std::endl;

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
