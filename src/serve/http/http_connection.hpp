// One client connection of the HTTPS transport (http_server.hpp): TLS handshake, then requests
// one after another, each through the phases head → admit (a worker) → body → handle (a worker)
// → answer, every phase under its deadline from HttpLimits. Private to the transport.
#pragma once
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <filesystem>
#include <memory>

#include "http/access_log.hpp"
#include "batchai/serve/http_limits.hpp"
#include "http/connection_registry.hpp"
#include "http/http_server.hpp"
#include "http/worker_pool.hpp"

namespace batchai::serve {

// What every connection of one server shares.
struct TransportContext {
  HttpLimits limits;
  HttpHandler& handler;
  std::filesystem::path spool_dir;
  std::unique_ptr<WorkerPool> workers;
  std::unique_ptr<ConnectionRegistry> registry;
  std::unique_ptr<AccessLog> access_log;  // null: none
};

// Takes over an accepted socket (its executor a strand); lives as long as its operations do.
void start_connection(TransportContext& ctx, boost::asio::ip::tcp::socket socket, boost::asio::ssl::context& tls);

}  // namespace batchai::serve
