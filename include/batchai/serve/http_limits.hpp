// The HTTPS transport's limits (src/serve/http): what one client may hold of the server. Apart
// from server.hpp so the transport needs nothing of Batch AI to know them.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace batchai::serve {

// The transport's hard limits (docs/serve.md "Limits"): what one client, however slow, silent
// or large, may hold of the server. Idle and slow connections cost a socket and a timer, never a
// thread; the routes run on `workers` threads with at most `queued_requests` waiting.
struct HttpLimits {
  std::chrono::milliseconds head_deadline{5000};      // TLS handshake + whole request head, from first byte
  std::chrono::milliseconds keep_alive_idle{5000};    // between requests on one connection
  std::chrono::milliseconds body_deadline{60000};     // a whole request body
  std::chrono::milliseconds body_progress{10000};     // without one byte of the body
  std::chrono::milliseconds write_progress{30000};    // an answer's piece (≤ 64 KiB) taken by the client
  std::size_t max_header_bytes = 64 * 1024;           // request line + header fields: 431 past it
  std::size_t max_target_bytes = 8 * 1024;            // the request target: 414 past it
  std::uint64_t max_body_bytes = 4 * 1024 * 1024;     // every body but a Put Blob's: 413 past it
  std::uint64_t max_put_blob_bytes = 64 * 1024 * 1024;  // spooled to disk as it arrives
  std::size_t max_connections = 4096;                 // in total
  std::size_t max_connections_per_peer = 512;         // from one address
  unsigned io_threads = 1;                            // TLS and parsing
  unsigned workers = 8;                               // the routes: SQLite, processes
  std::size_t queued_requests = 256;                  // waiting for a worker: 503 past it
  std::chrono::milliseconds stop_grace{1500};         // stop(): workers get this long to finish
  std::uint64_t max_access_log_bytes = 16 * 1024 * 1024;  // then it rotates, one old file kept
};

}  // namespace batchai::serve
