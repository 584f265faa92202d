#include "http/certificate.hpp"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>
#include <string>

#include "batchai/common/errors.hpp"
#include "http/encoding.hpp"
#include "http/private_file.hpp"

namespace batchai::serve {
namespace {

using X509Ptr = std::unique_ptr<X509, decltype(&X509_free)>;
using KeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using BioPtr = std::unique_ptr<BIO, decltype(&BIO_free)>;

constexpr long kValidDays = 365;
constexpr long kRenewBeforeSeconds = 24 * 3600;
constexpr const char* kSubjectAltNames =
    "DNS:localhost,DNS:*.file.core.localhost,DNS:*.blob.core.localhost,IP:127.0.0.1,IP:::1";

X509Ptr read_cert(const std::filesystem::path& path) {
  BioPtr bio(BIO_new_file(path.c_str(), "r"), BIO_free);
  if (!bio) return {nullptr, X509_free};
  return {PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), X509_free};
}

KeyPtr read_key(const std::filesystem::path& path) {
  BioPtr bio(BIO_new_file(path.c_str(), "r"), BIO_free);
  if (!bio) return {nullptr, EVP_PKEY_free};
  return {PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr), EVP_PKEY_free};
}

std::string pem_of(int (*write)(BIO*, void*), void* object) {
  BioPtr bio(BIO_new(BIO_s_mem()), BIO_free);
  if (!bio || write(bio.get(), object) != 1) throw SystemError("OpenSSL could not encode the certificate.");
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(len));
}

void add_extension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr || X509_add_ext(cert, ext, -1) != 1) {
    X509_EXTENSION_free(ext);
    throw SystemError("OpenSSL could not add a certificate extension.");
  }
  X509_EXTENSION_free(ext);
}

// Valid for at least another day, and signed for this key.
bool usable(const std::filesystem::path& cert_file, const std::filesystem::path& key_file) {
  X509Ptr cert = read_cert(cert_file);
  KeyPtr key = read_key(key_file);
  if (!cert || !key || X509_check_private_key(cert.get(), key.get()) != 1) return false;
  time_t soon = time(nullptr) + kRenewBeforeSeconds;
  return X509_cmp_time(X509_get0_notAfter(cert.get()), &soon) > 0;
}

void make(const std::filesystem::path& cert_file, const std::filesystem::path& key_file) {
  KeyPtr key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  X509Ptr cert(X509_new(), X509_free);
  if (!key || !cert) throw SystemError("OpenSSL could not make a key for the server's certificate.");
  X509_set_version(cert.get(), 2);
  // A positive random serial: clients cache certificates by issuer and serial.
  std::string serial = random_bytes(16);
  serial[0] = static_cast<char>(serial[0] & 0x7F);
  BIGNUM* bn = BN_bin2bn(reinterpret_cast<const unsigned char*>(serial.data()), static_cast<int>(serial.size()), nullptr);
  if (bn == nullptr || BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get())) == nullptr) {
    BN_free(bn);
    throw SystemError("OpenSSL could not set the certificate's serial number.");
  }
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), kValidDays * 24 * 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("batchai serve"), -1, -1,
                             0);
  X509_set_issuer_name(cert.get(), name);
  // Its own trust anchor (REQUESTS_CA_BUNDLE names it), hence CA:TRUE, as the stub's was.
  add_extension(cert.get(), NID_basic_constraints, "critical,CA:TRUE");
  add_extension(cert.get(), NID_key_usage, "critical,digitalSignature,keyCertSign");
  add_extension(cert.get(), NID_ext_key_usage, "serverAuth");
  add_extension(cert.get(), NID_subject_key_identifier, "hash");
  add_extension(cert.get(), NID_authority_key_identifier, "keyid:always");
  add_extension(cert.get(), NID_subject_alt_name, kSubjectAltNames);
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) throw SystemError("OpenSSL could not sign the certificate.");
  const std::string key_pem = pem_of(
      [](BIO* b, void* k) {
        return PEM_write_bio_PrivateKey(b, static_cast<EVP_PKEY*>(k), nullptr, nullptr, 0, nullptr, nullptr);
      },
      key.get());
  const std::string cert_pem = pem_of([](BIO* b, void* c) { return PEM_write_bio_X509(b, static_cast<X509*>(c)); },
                                      cert.get());
  write_private_file(key_file, key_pem);
  write_private_file(cert_file, cert_pem);
}

}  // namespace

CertificateFiles ensure_self_signed_certificate(const std::filesystem::path& dir) {
  make_private_dir(dir);
  CertificateFiles files{dir / "cert.pem", dir / "key.pem"};
  if (!usable(files.cert, files.key)) make(files.cert, files.key);
  return files;
}

void check_certificate_pair(const std::filesystem::path& cert_file, const std::filesystem::path& key_file) {
  X509Ptr cert = read_cert(cert_file);
  if (!cert) throw InvalidArgument("--cert " + cert_file.string() + ": not a readable PEM certificate.");
  KeyPtr key = read_key(key_file);
  if (!key) throw InvalidArgument("--key " + key_file.string() + ": not a readable, unencrypted PEM private key.");
  if (X509_check_private_key(cert.get(), key.get()) != 1)
    throw InvalidArgument("--key " + key_file.string() + " is not the private key of --cert " + cert_file.string() + ".");
}

}  // namespace batchai::serve
