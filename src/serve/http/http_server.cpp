#include "http/http_server.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "batchai/common/errors.hpp"
#include "http/connection_registry.hpp"
#include "http/http_connection.hpp"
#include "http/worker_pool.hpp"

namespace batchai::serve {
namespace {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;

// Enough descriptors for every connection the limits allow (the soft limit is often 1024).
void raise_descriptor_limit(std::size_t connections) {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return;
  const rlim_t want = static_cast<rlim_t>(connections) + 256;
  if (lim.rlim_cur >= want) return;
  lim.rlim_cur = lim.rlim_max == RLIM_INFINITY ? want : std::min(want, lim.rlim_max);
  ::setrlimit(RLIMIT_NOFILE, &lim);
}

}  // namespace

struct HttpServer::Impl : TransportContext {
  ssl::context tls{ssl::context::tls_server};  // before the loop: its connections' TLS state refers to it
  net::io_context ioc;
  tcp::acceptor acceptor{ioc};
  net::steady_timer accept_pause{ioc};
  int bound_port = 0;
  std::atomic<bool> stopping{false};

  Impl(const HttpEndpoint& endpoint, const HttpLimits& l, HttpHandler& h)
      : TransportContext{l, h, endpoint.spool_dir, std::make_unique<WorkerPool>(l.workers, l.queued_requests),
                         std::make_unique<ConnectionRegistry>(l.max_connections, l.max_connections_per_peer),
                         endpoint.access_log.empty() ? nullptr
                                                     : std::make_unique<AccessLog>(endpoint.access_log, l.max_access_log_bytes,
                                                                                 AccessLog::kDefaultQueueBytes,
                                                                                 endpoint.secret_path_prefixes)},
        ioc(static_cast<int>(l.io_threads == 0 ? 1 : l.io_threads)) {
    boost::system::error_code ec;
    tls.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                    ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
    tls.use_certificate_chain_file(endpoint.cert.string(), ec);
    if (!ec) tls.use_private_key_file(endpoint.key.string(), ssl::context::pem, ec);
    if (ec) throw SystemError("The TLS server could not be set up with " + endpoint.cert.string() + ": " + ec.message());
    raise_descriptor_limit(l.max_connections);
    bind(endpoint);
  }

  void bind(const HttpEndpoint& endpoint) {
    boost::system::error_code ec;
    auto address = net::ip::make_address(endpoint.host == "localhost" ? "127.0.0.1" : endpoint.host, ec);
    if (ec) throw InvalidArgument("--host must be an IP address of this machine, got '" + endpoint.host + "'.");
    const tcp::endpoint at(address, static_cast<unsigned short>(endpoint.port));
    acceptor.open(at.protocol(), ec);
    // SO_REUSEADDR alone (no SO_REUSEPORT): a restart may reuse the port, a twin server may not.
    if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor.bind(at, ec);
    if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
    if (ec)
      throw SystemError("Cannot listen on " + endpoint.host + ":" + std::to_string(endpoint.port) + ": " + ec.message() +
                        (endpoint.port == 0 ? "." : " (the port is taken or the address is not this machine's; try --port 0)."));
    bound_port = acceptor.local_endpoint().port();
  }

  void accept() {
    acceptor.async_accept(net::make_strand(ioc), [this](boost::system::error_code ec, tcp::socket socket) {
      if (stopping) return;
      if (ec) {
        // Out of descriptors (or another transient failure): pause instead of spinning.
        accept_pause.expires_after(std::chrono::milliseconds(50));
        accept_pause.async_wait([this](boost::system::error_code) {
          if (!stopping) accept();
        });
        return;
      }
      start_connection(*this, std::move(socket), tls);
      accept();
    });
  }
};

HttpServer::HttpServer(const HttpEndpoint& endpoint, const HttpLimits& limits, HttpHandler& handler)
    : impl_(std::make_unique<Impl>(endpoint, limits, handler)) {}

HttpServer::~HttpServer() {
  stop();
  // The workers go first, waiting for the routes still running: they post back to the loop.
  impl_->workers.reset();
}

int HttpServer::port() const { return impl_->bound_port; }

bool HttpServer::run() {
  Impl& s = *impl_;
  if (!s.stopping) {
    s.accept();
    std::vector<std::thread> more;
    for (unsigned i = 1; i < s.limits.io_threads; ++i) more.emplace_back([&s] { s.ioc.run(); });
    s.ioc.run();
    for (auto& t : more) t.join();
  }
  return s.workers->stop(s.limits.stop_grace);
}

void HttpServer::stop() {
  Impl& s = *impl_;
  s.stopping = true;
  // Every connection, however slow its peer, ends with the loop: nothing waits for a client.
  s.ioc.stop();
}

}  // namespace batchai::serve
