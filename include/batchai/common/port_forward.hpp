// `node exec -L lport:rhost:rport` (docs/job-runtime.md §4.10.6): listen on 0.0.0.0:lport and relay every
// connection to rhost:rport as the node sees it. Simulated nodes live on this machine, so the
// node's view is this machine's view and the tunnel is a plain local TCP relay.
#pragma once
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

namespace batchai {

struct ForwardSpec {
  int local_port = 0;  // 0: any free port
  std::string remote_host;
  int remote_port = 0;
};

// Parses "lport:rhost:rport" (ports 0-65535, rport > 0); throws InvalidArgument naming the text.
ForwardSpec parse_forward_spec(const std::string& text);

class PortForwarder {
 public:
  // Binds and starts accepting; throws batchai::Error when the port cannot be bound.
  explicit PortForwarder(ForwardSpec spec);
  // Stops accepting, cuts every relayed connection and joins the threads.
  ~PortForwarder();
  PortForwarder(const PortForwarder&) = delete;
  PortForwarder& operator=(const PortForwarder&) = delete;

  int local_port() const { return local_port_; }

 private:
  void accept_loop();
  // Copies `from` to `to` until EOF, then half-closes `to`; the second pump of a connection
  // to finish closes both sockets.
  void pump(int from, int to, std::shared_ptr<std::atomic<int>> pumps_left);

  ForwardSpec spec_;
  int listen_fd_ = -1;
  int local_port_ = 0;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::condition_variable pumps_done_;
  std::set<int> open_fds_;  // relayed sockets, shut down on stop
  int pumps_ = 0;           // running (detached) pump threads
  std::thread acceptor_;
};

}  // namespace batchai
