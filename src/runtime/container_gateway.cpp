// The launch agent of MPI jobs in containers and its gateway (container_gateway.hpp).
#include "batchai/runtime/container_gateway.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <set>
#include <thread>

#include "batchai/common/confined_path.hpp"
#include "batchai/common/errors.hpp"
#include "batchai/common/json_util.hpp"
#include "batchai/common/process_tree.hpp"

namespace fs = std::filesystem;

namespace batchai::runtime {
namespace {

constexpr std::size_t kMaxRequest = 256 * 1024;
// mpirun asks once per node (at most 1000); more is not a launch agent: refused, so no process in
// the job's containers can make its runner start threads without end.
constexpr std::size_t kMaxSessions = 1024;
constexpr int kRequestWaitMs = 10000;
constexpr auto kPoll = std::chrono::milliseconds(200);

bool write_all(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// Reads exactly `size` bytes, waiting at most `wait_ms` for each piece (-1: no bound).
bool read_all(int fd, void* data, std::size_t size, int wait_ms) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    pollfd pfd{fd, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    const ssize_t n = ::recv(fd, p, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

sockaddr_un socket_address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) throw SystemError("the gateway's socket path is too long: " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

}  // namespace

std::string container_host(std::size_t node) { return "batchai-node-" + std::to_string(node); }

int run_container_enter(const std::vector<std::string>& args) {
  if (args.size() < 2) {
    std::cerr << "batchai " << kContainerEnterCommand << ": usage: " << kContainerEnterCommand << " <host> <command...>\n";
    return 2;
  }
  const char* path = std::getenv(kGatewayVariable);
  if (path == nullptr || *path == '\0') {
    std::cerr << "batchai " << kContainerEnterCommand << ": " << kGatewayVariable << " is not set: run by mpirun of a container job only\n";
    return 255;
  }
  std::string command;
  for (std::size_t i = 1; i < args.size(); ++i) command += (i > 1 ? " " : "") + args[i];
  try {
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    const sockaddr_un addr = socket_address(path);
    if (!fd || ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
      throw SystemError(std::string("cannot reach the job's container gateway at ") + path + ": " + std::strerror(errno));
    const std::string request = Json{{"host", args[0]}, {"command", command}}.dump();
    const std::uint32_t size = static_cast<std::uint32_t>(request.size());
    if (!write_all(fd.get(), &size, sizeof size) || !write_all(fd.get(), request.data(), request.size()))
      throw SystemError("the job's container gateway closed the connection");
    std::int32_t code = 255;
    if (!read_all(fd.get(), &code, sizeof code, -1)) throw SystemError("the job's container gateway ended first");
    return code;
  } catch (const std::exception& e) {
    std::cerr << "batchai " << kContainerEnterCommand << ": " << e.what() << "\n";
    return 255;
  }
}

struct ContainerGateway::State {
  State(ProcessLauncher& l, GatewayOptions o) : launcher(l), options(std::move(o)) {}
  ProcessLauncher& launcher;
  GatewayOptions options;
  UniqueFd listener;
  UniqueFd stop{::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)};
  std::atomic<bool> stopping{false};
  std::mutex mutex;
  std::vector<std::thread> sessions;
  std::thread acceptor;

  void accept_loop() {
    for (;;) {
      pollfd fds[2] = {{listener.get(), POLLIN, 0}, {stop.get(), POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
      if (stopping) return;
      if ((fds[0].revents & POLLIN) == 0) continue;
      const int conn = ::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC);
      if (conn < 0) continue;
      std::lock_guard lock(mutex);
      if (sessions.size() >= kMaxSessions) {
        ::close(conn);
        continue;
      }
      sessions.emplace_back([this, conn] { serve(UniqueFd(conn)); });
    }
  }

  // One agent: its request, the command in the named container, the exit code back. The command
  // is killed when the agent goes (mpirun stopped it) or the gateway stops.
  void serve(UniqueFd conn) {
    std::uint32_t size = 0;
    if (!read_all(conn.get(), &size, sizeof size, kRequestWaitMs) || size == 0 || size > kMaxRequest) return;
    std::string text(size, '\0');
    if (!read_all(conn.get(), text.data(), size, kRequestWaitMs)) return;
    std::int32_t code = 255;
    try {
      const Json request = Json::parse(text);
      const auto it = options.containers.find(request.at("host").get<std::string>());
      if (it == options.containers.end()) throw InvalidArgument("not a node of this job");
      ProcessSpec spec;
      if (const auto route = options.prefixes.find(it->first); route != options.prefixes.end()) spec.argv = route->second;
      spec.argv.insert(spec.argv.end(), options.podman_base.begin(), options.podman_base.end());
      spec.argv.insert(spec.argv.end(), {"exec", "-e", kJobKeyVariable, it->second, "sh", "-c", request.at("command").get<std::string>()});
      spec.clear_env = true;
      spec.env = options.env;
      spec.stdout_file = options.log;
      spec.stderr_file = options.log;
      spec.append = true;
      const pid_t pid = launcher.spawn(spec);
      std::optional<ProcessExit> exit;
      while (!(exit = launcher.wait(pid, kPoll))) {
        pollfd pfd{conn.get(), POLLIN, 0};
        const bool agent_gone = ::poll(&pfd, 1, 0) > 0;  // it sends nothing more: readable means closed
        if (agent_gone || stopping) {
          launcher.signal_group(pid, SIGKILL);
          exit = launcher.wait(pid, std::nullopt);
          break;
        }
      }
      code = exit->exit_code;
    } catch (const std::exception& e) {
      const std::string said = std::string("batchai container gateway: ") + e.what() + "\n";
      (void)!::write(STDERR_FILENO, said.data(), said.size());
    }
    write_all(conn.get(), &code, sizeof code);
  }
};

ContainerGateway::ContainerGateway(ProcessLauncher& launcher, GatewayOptions options)
    : state_(std::make_unique<State>(launcher, std::move(options))) {
  const fs::path& dir = state_->options.dir;
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all);
  std::error_code ec;
  fs::remove(dir / "socket", ec);
  // Bound through /proc/self/fd: the folder's own path may be longer than a socket path can be.
  UniqueFd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  state_->listener = UniqueFd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!dir_fd || !state_->listener || !state_->stop) throw SystemError("cannot open the container gateway in " + dir.string());
  const sockaddr_un addr = socket_address("/proc/self/fd/" + std::to_string(dir_fd.get()) + "/socket");
  if (::bind(state_->listener.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(state_->listener.get(), 64) != 0)
    throw SystemError("cannot listen for the container gateway in " + dir.string() + ": " + std::strerror(errno));
  state_->acceptor = std::thread([s = state_.get()] { s->accept_loop(); });
}

ContainerGateway::~ContainerGateway() {
  state_->stopping = true;
  const std::uint64_t one = 1;
  (void)!::write(state_->stop.get(), &one, sizeof one);
  state_->acceptor.join();
  std::vector<std::thread> sessions;
  {
    std::lock_guard lock(state_->mutex);
    sessions.swap(state_->sessions);
  }
  for (auto& t : sessions) t.join();
  std::error_code ec;
  fs::remove(state_->options.dir / "socket", ec);
}

}  // namespace batchai::runtime
