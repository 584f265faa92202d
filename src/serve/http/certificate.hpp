// The self-signed certificate `batchai serve` uses without --cert (docs/serve.md): an EC P-256
// key (0600) and a certificate for localhost, *.file.core.localhost, *.blob.core.localhost,
// 127.0.0.1 and ::1, made with OpenSSL's API and reused while valid for another day.
#pragma once
#include <filesystem>

namespace batchai::serve {

struct CertificateFiles {
  std::filesystem::path cert;
  std::filesystem::path key;
};

// <dir>/cert.pem and <dir>/key.pem, made (again) when missing, unreadable, mismatched or
// within a day of expiry.
CertificateFiles ensure_self_signed_certificate(const std::filesystem::path& dir);

// Refuses (InvalidArgument) a --cert/--key pair OpenSSL cannot read or whose key does not match.
void check_certificate_pair(const std::filesystem::path& cert, const std::filesystem::path& key);

}  // namespace batchai::serve
