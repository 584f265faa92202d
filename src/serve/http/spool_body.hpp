// A Beast body type that writes a request body to a file descriptor as it arrives (hashing it
// with MD5 on the way), so a 64 MiB Put Blob costs the server a file, not 64 MiB of memory.
#pragma once
#include <openssl/evp.h>
#include <unistd.h>

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/optional.hpp>
#include <cerrno>
#include <cstdint>
#include <memory>

#include "http/http_message.hpp"

namespace batchai::serve {

struct SpoolBody {
  struct value_type {
    std::shared_ptr<SpooledBody> spooled;  // its fd open for writing, size 0
    std::shared_ptr<EVP_MD_CTX> md5{EVP_MD_CTX_new(), EVP_MD_CTX_free};
  };

  class reader {
   public:
    template <bool isRequest, class Fields>
    reader(boost::beast::http::header<isRequest, Fields>&, value_type& body) : body_(body) {}

    void init(const boost::optional<std::uint64_t>&, boost::beast::error_code& ec) {
      if (!body_.spooled || !body_.md5 || EVP_DigestInit_ex(body_.md5.get(), EVP_md5(), nullptr) != 1)
        ec = boost::beast::http::error::body_limit;  // no file to write to: refuse the body
      else
        ec = {};
    }

    template <class ConstBufferSequence>
    std::size_t put(const ConstBufferSequence& buffers, boost::beast::error_code& ec) {
      std::size_t taken = 0;
      for (auto it = boost::asio::buffer_sequence_begin(buffers); it != boost::asio::buffer_sequence_end(buffers); ++it) {
        boost::asio::const_buffer b = *it;
        const char* p = static_cast<const char*>(b.data());
        std::size_t left = b.size();
        EVP_DigestUpdate(body_.md5.get(), p, left);
        while (left > 0) {
          const ssize_t n = ::write(body_.spooled->fd.get(), p, left);
          if (n < 0 && errno == EINTR) continue;
          if (n <= 0) {
            body_.spooled->write_error = errno == 0 ? EIO : errno;  // answered by the transport (507 when full)
            ec = boost::beast::error_code(body_.spooled->write_error, boost::system::generic_category());
            return taken;
          }
          p += n;
          left -= static_cast<std::size_t>(n);
          taken += static_cast<std::size_t>(n);
          body_.spooled->size += static_cast<std::uint64_t>(n);
        }
      }
      ec = {};
      return taken;
    }

    void finish(boost::beast::error_code& ec) {
      unsigned char digest[EVP_MAX_MD_SIZE];
      unsigned int len = 0;
      EVP_DigestFinal_ex(body_.md5.get(), digest, &len);
      body_.spooled->md5.assign(reinterpret_cast<const char*>(digest), len);
      ::lseek(body_.spooled->fd.get(), 0, SEEK_SET);
      ec = {};
    }

   private:
    value_type& body_;
  };
};

}  // namespace batchai::serve
