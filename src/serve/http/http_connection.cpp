#include "http/http_connection.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cerrno>
#include <chrono>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include "batchai/common/ids.hpp"
#include "http/spool_body.hpp"

namespace batchai::serve {
namespace {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kPiece = 64 * 1024;  // a streamed answer is read and written this much at a time
constexpr std::chrono::seconds kShutdownDeadline{1};
// After refusing a body it did not read, the server reads and drops what the client still sends
// for this long, so a client that writes its whole body before reading gets the answer instead
// of a reset (Apache's and nginx's lingering close).
constexpr std::chrono::seconds kLingerTime{2};
constexpr char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";

bool is_parse_error(const beast::error_code& ec) {
  static const auto& category = http::make_error_code(http::error::bad_target).category();
  return ec.category() == category && ec != http::error::end_of_stream && ec != http::error::partial_message;
}

// A body that could not be spooled: the disk is full (507), or another failure (500).
int spool_failure_status(int err) { return err == ENOSPC || err == EDQUOT ? 507 : 500; }

// RFC 9112 §6.3: a request's body length is known from a final `chunked` (the one transfer coding
// served) or from Content-Length. Any other Transfer-Encoding (gzip, identity, "chunked, identity",
// chunked twice) cannot be framed: it is refused, never read as an empty body followed by another
// request (a smuggling primitive behind a proxy).
template <class Fields>
bool framing_served(const Fields& fields) {
  std::size_t headers = 0;
  std::vector<std::string_view> codings;
  for (const auto& field : fields) {
    if (field.name() != http::field::transfer_encoding) continue;
    ++headers;
    std::string_view rest(field.value().data(), field.value().size());
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      std::string_view item = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
      while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
      if (!item.empty()) codings.push_back(item);
    }
  }
  return headers == 0 || (codings.size() == 1 && iequals(codings.front(), "chunked"));
}

// An unlinked file for a spooled body: gone from the disk when its descriptor closes.
std::shared_ptr<SpooledBody> open_spool(const std::filesystem::path& dir) {
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {  // a file system without O_TMPFILE: a named file, unlinked at once
    std::string name = (dir / "upload-XXXXXX").string();
    fd = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd >= 0) ::unlink(name.c_str());
  }
  if (fd < 0) return nullptr;
  auto spooled = std::make_shared<SpooledBody>();
  spooled->fd = UniqueFd(fd);
  return spooled;
}

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(TransportContext& ctx, tcp::socket socket, ssl::context& tls)
      : ctx_(ctx), stream_(std::move(socket), tls), buffer_(ctx.limits.max_header_bytes + kPiece) {}
  ~Connection() {
    if (id_ != 0) ctx_.registry->close(id_);
  }

  void start() {
    beast::error_code ec;
    lowest().socket().set_option(tcp::no_delay(true), ec);  // answers go out whole, not held for the peer's ACK
    peer_ = peer_address();
    std::weak_ptr<Connection> weak = weak_from_this();
    auto executor = stream_.get_executor();
    id_ = ctx_.registry->open(peer_, Clock::now(), [weak, executor] {
      net::post(executor, [weak] {
        if (auto self = weak.lock()) self->abort();
      });
    });
    if (id_ == 0) return;  // every connection is busy: this one is refused (closed with us)
    lowest().expires_after(ctx_.limits.head_deadline);  // the handshake and the first head
    stream_.async_handshake(ssl::stream_base::server, [self = shared_from_this()](beast::error_code e) {
      if (!e) self->read_head();
    });
  }

 private:
  beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream_); }

  void abort() {
    aborted_ = true;
    lowest().close();
  }

  void evictable(bool yes) { ctx_.registry->set_evictable(id_, yes, Clock::now()); }

  // ---- the head ----

  void read_head() {
    evictable(true);
    input_pending_ = false;
    request_ = HttpRequest{};
    head_.emplace();
    head_->header_limit(static_cast<std::uint32_t>(ctx_.limits.max_header_bytes));
    // The route's limit applies once the head says which route. Not boost::none: Boost 1.74 compares
    // a Content-Length with an empty limit as if the limit were exceeded.
    head_->body_limit(std::numeric_limits<std::uint64_t>::max());
    http::async_read_header(stream_, buffer_, *head_,
                            [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_head(ec); });
  }

  void on_head(beast::error_code ec) {
    if (aborted_) return;
    head_read_ = Clock::now();
    if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
      input_pending_ = true;
      return refuse(431, nullptr);
    }
    if (is_parse_error(ec)) {
      input_pending_ = true;
      return refuse(400, nullptr);
    }
    if (ec) return;  // timeout, hang-up, TLS failure: the connection just ends
    lowest().expires_never();
    const auto& msg = head_->get();
    request_.method = std::string(msg.method_string());
    request_.target = std::string(msg.target());
    request_.peer = peer_;
    for (const auto& field : msg) request_.headers.emplace(std::string(field.name_string()), std::string(field.value()));
    keep_alive_ = head_->keep_alive();
    // Split before the 414 too, so that a long /ui/ target is answered with the dashboard's headers.
    const bool split = !request_.target.empty() && request_.target[0] == '/' &&
                       split_target(request_.target, request_.path, request_.params);
    if (request_.target.size() > ctx_.limits.max_target_bytes) return refuse(414, &request_);
    if (!split) return refuse(400, &request_);
    if (!framing_served(msg)) {
      input_pending_ = true;  // what follows is not a request: it is drained, never parsed
      return refuse(400, &request_);
    }
    if (head_->is_done()) return dispatch();
    input_pending_ = true;
    const auto length = head_->content_length();
    if (length && *length > std::max(ctx_.limits.max_body_bytes, ctx_.limits.max_put_blob_bytes))
      return refuse(413, &request_);
    admit();
  }

  std::string peer_address() {
    beast::error_code ec;
    const auto remote = lowest().socket().remote_endpoint(ec);
    return ec ? std::string("?") : remote.address().to_string();
  }

  // ---- the body ----

  void admit() {
    evictable(false);  // a worker has the request: the client cannot prolong this
    auto self = shared_from_this();
    const bool queued = ctx_.workers->try_post([self] {
      BodyPlan plan;
      try {
        plan = self->ctx_.handler.admit(self->request_);
      } catch (...) {
        plan.refuse = self->ctx_.handler.refusal(&self->request_, 500);
      }
      net::post(self->stream_.get_executor(), [self, plan = std::move(plan)]() mutable { self->on_admit(std::move(plan)); });
    });
    if (!queued) refuse(503, &request_);
  }

  void on_admit(BodyPlan plan) {
    if (aborted_) return;
    if (plan.refuse) {
      keep_alive_ = false;  // the body was not read
      return write(std::move(*plan.refuse));
    }
    const auto length = head_->content_length();
    if (length && *length > plan.limit) return refuse(413, &request_);
    if (plan.spool) {
      auto spooled = open_spool(ctx_.spool_dir);
      if (!spooled) return refuse(spool_failure_status(errno), &request_);
      spool_.emplace(std::move(*head_));
      spool_->get().body().spooled = std::move(spooled);
      spool_->body_limit(plan.limit);
    } else {
      text_.emplace(std::move(*head_));
      text_->body_limit(plan.limit);
    }
    body_started_ = Clock::now();
    evictable(true);  // reading a body waits on the peer: a stalled one gives way (F411)
    if (!iequals(request_.get_header_value("Expect"), "100-continue")) return read_body();
    lowest().expires_after(ctx_.limits.write_progress);
    net::async_write(stream_, net::buffer(kContinue, sizeof kContinue - 1),
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       if (!ec) self->read_body();
                     });
  }

  void read_body() {
    if (spool_) return read_body_with(*spool_);
    read_body_with(*text_);
  }

  // Piece by piece, each under the progress deadline, all under the body's.
  template <class Parser>
  void read_body_with(Parser& parser) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(body_started_ + ctx_.limits.body_deadline -
                                                                            Clock::now());
    if (left.count() <= 0) return;  // too slow: dropped
    lowest().expires_after(std::min(left, ctx_.limits.body_progress));
    http::async_read_some(stream_, buffer_, parser, [self = shared_from_this(), &parser](beast::error_code ec, std::size_t n) {
      if (self->aborted_) return;
      if (ec == http::error::body_limit) return self->refuse(413, &self->request_);
      if (is_parse_error(ec)) return self->refuse(400, &self->request_);
      if (const int err = self->spool_error()) return self->refuse(spool_failure_status(err), &self->request_);
      if (ec) return;
      if (n > 0) self->ctx_.registry->touch(self->id_, Clock::now());
      if (!parser.is_done()) return self->read_body_with(parser);
      self->lowest().expires_never();
      self->body_done();
    });
  }

  // The errno of a failed write to the spool file (a full disk), else 0.
  int spool_error() const {
    if (!spool_) return 0;
    const auto& spooled = spool_->get().body().spooled;
    return spooled ? spooled->write_error : 0;
  }

  void body_done() {
    input_pending_ = false;
    if (spool_) {
      request_.spooled = spool_->get().body().spooled;
      spool_.reset();
    } else {
      request_.body = std::move(text_->get().body());
      text_.reset();
    }
    dispatch();
  }

  // ---- the route and the answer ----

  void dispatch() {
    evictable(false);
    auto self = shared_from_this();
    const bool queued = ctx_.workers->try_post([self] {
      HttpResponse res;
      try {
        res = self->ctx_.handler.handle(self->request_);
      } catch (...) {
        res = self->ctx_.handler.refusal(&self->request_, 500);
      }
      net::post(self->stream_.get_executor(), [self, res = std::move(res)]() mutable { self->write(std::move(res)); });
    });
    if (!queued) refuse(503, &request_, false);
  }

  void refuse(int status, const HttpRequest* head, bool close = true) {
    HttpResponse res = ctx_.handler.refusal(head, status);
    if (status == 503) res.set_header("Retry-After", "1");
    if (close) keep_alive_ = false;
    write(std::move(res));
  }

  template <class Message>
  void fill(Message& msg, const HttpResponse& res) {
    for (const auto& [name, value] : res.headers) msg.insert(name, value);
    msg.keep_alive(keep_alive_);
  }

  void write(HttpResponse res) {
    if (aborted_) return;
    if (res.close) keep_alive_ = false;
    const auto status = static_cast<unsigned>(res.status);
    const bool bodiless = request_.method == "HEAD" || status == 204 || status == 304;
    answer_status_ = res.status;
    answer_bytes_ = bodiless ? 0 : res.file ? res.file->length : res.body.size();
    logged_ = false;
    evictable(true);  // the answer waits on the peer to take it
    lowest().expires_after(ctx_.limits.write_progress);
    auto self = shared_from_this();
    if (res.file && !bodiless) return stream_file(std::move(res));
    if (bodiless) {
      auto msg = std::make_shared<http::response<http::empty_body>>(static_cast<http::status>(status), 11);
      fill(*msg, res);
      if (status != 204 && status != 304) msg->content_length(res.file ? res.file->length : res.body.size());
      return http::async_write(stream_, *msg, [self, msg](beast::error_code ec, std::size_t) { self->after_write(ec); });
    }
    auto msg = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(status), 11);
    fill(*msg, res);
    msg->body() = std::move(res.body);
    msg->prepare_payload();
    http::async_write(stream_, *msg, [self, msg](beast::error_code ec, std::size_t) { self->after_write(ec); });
  }

  // A file's bytes in pieces of kPiece, each read when the client has taken the one before.
  void stream_file(HttpResponse res) {
    file_ = std::move(*res.file);
    sent_ = 0;
    streamed_ = std::make_unique<http::response<http::buffer_body>>(static_cast<http::status>(res.status), 11);
    fill(*streamed_, res);
    streamed_->content_length(file_.length);
    streamed_->body().data = nullptr;
    streamed_->body().more = true;
    serializer_ = std::make_unique<http::response_serializer<http::buffer_body>>(*streamed_);
    piece_.resize(kPiece);
    http::async_write_header(stream_, *serializer_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (!ec) self->write_piece();
    });
  }

  void write_piece() {
    auto& body = streamed_->body();
    if (sent_ >= file_.length) {
      body.data = nullptr;
      body.size = 0;
      body.more = false;
    } else {
      const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(kPiece, file_.length - sent_));
      const ssize_t got = ::pread(file_.fd->get(), piece_.data(), want, static_cast<off_t>(file_.offset + sent_));
      if (got <= 0) {  // the file shrank under us: the answer cannot be finished
        log_answer(false);
        return abort();
      }
      body.data = piece_.data();
      body.size = static_cast<std::size_t>(got);
      body.more = true;
      sent_ += static_cast<std::uint64_t>(got);
    }
    lowest().expires_after(ctx_.limits.write_progress);
    http::async_write(stream_, *serializer_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec == http::error::need_buffer) ec = {};
      if (ec) return;
      self->ctx_.registry->touch(self->id_, Clock::now());
      if (self->serializer_->is_done()) return self->after_write(ec);
      self->write_piece();
    });
  }

  // One access log line per answer, written once it is sent (or given up).
  void log_answer(bool completed) {
    if (logged_ || !ctx_.access_log) return;
    logged_ = true;
    ctx_.access_log->record({peer_, request_.method, request_.path, answer_status_, answer_bytes_,
                             std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - head_read_),
                             completed});
  }

  void after_write(beast::error_code ec) {
    log_answer(!ec && !aborted_);
    serializer_.reset();
    streamed_.reset();
    file_ = FileBody{};
    request_ = HttpRequest{};
    if (ec || aborted_) return;
    if (input_pending_) return linger();
    if (!keep_alive_) return shutdown();
    wait_for_next();
  }

  void linger() {
    evictable(true);
    input_pending_ = false;
    spool_.reset();
    text_.reset();
    lowest().expires_after(kLingerTime);
    drop_input();
  }

  void drop_input() {
    buffer_.clear();
    stream_.async_read_some(buffer_.prepare(kPiece), [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return self->lowest().close();  // the client is done, or the time is up
      self->drop_input();
    });
  }

  // Keep-alive: the next head's deadline starts with its first byte.
  void wait_for_next() {
    evictable(true);
    if (buffer_.size() > 0) {
      lowest().expires_after(ctx_.limits.head_deadline);
      return read_head();
    }
    lowest().expires_after(ctx_.limits.keep_alive_idle);
    stream_.async_read_some(buffer_.prepare(kPiece), [self = shared_from_this()](beast::error_code ec, std::size_t n) {
      if (ec || self->aborted_) return;
      self->buffer_.commit(n);
      self->lowest().expires_after(self->ctx_.limits.head_deadline);
      self->read_head();
    });
  }

  void shutdown() {
    lowest().expires_after(kShutdownDeadline);
    stream_.async_shutdown([self = shared_from_this()](beast::error_code) { self->lowest().close(); });
  }

  TransportContext& ctx_;
  beast::ssl_stream<beast::tcp_stream> stream_;
  beast::flat_buffer buffer_;
  std::string peer_;  // the client's address, as the registry counts it
  ConnectionRegistry::Id id_ = 0;
  bool aborted_ = false;
  bool keep_alive_ = false;
  bool input_pending_ = false;  // the client may still be sending what was not read (a body, a head)
  HttpRequest request_;
  std::optional<http::request_parser<http::empty_body>> head_;
  std::optional<http::request_parser<http::string_body>> text_;
  std::optional<http::request_parser<SpoolBody>> spool_;
  Clock::time_point body_started_;
  Clock::time_point head_read_;    // the access log's duration starts here
  int answer_status_ = 0;
  std::uint64_t answer_bytes_ = 0;
  bool logged_ = true;             // nothing to log until an answer is written
  FileBody file_;
  std::uint64_t sent_ = 0;
  std::vector<char> piece_;
  std::unique_ptr<http::response<http::buffer_body>> streamed_;
  std::unique_ptr<http::response_serializer<http::buffer_body>> serializer_;
};

}  // namespace

void start_connection(TransportContext& ctx, tcp::socket socket, ssl::context& tls) {
  std::make_shared<Connection>(ctx, std::move(socket), tls)->start();
}

}  // namespace batchai::serve
