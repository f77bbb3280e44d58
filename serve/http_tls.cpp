// serve/http_tls.cpp — HTTPS for pure-serve (--tls-cert, --tls-key): Asio's TLS stream over
// Debian's OpenSSL with modern defaults (TLS 1.2 and 1.3 only, forward-secret AEAD ciphers, no
// compression, no renegotiation), and the TLS instance of the session template
// (http_session.h). Its own translation unit, so that the plain path's does not grow.
#include "serve/http_session.h"

#if PURE_HAVE_TLS
#include <boost/asio/ssl.hpp>
#include <openssl/ssl.h>
#endif

namespace pure::serve::detail {

#if PURE_HAVE_TLS

struct TlsContext {
  net::ssl::context ssl{net::ssl::context::tls_server};
};

// TLS 1.2's ciphers: ECDHE key exchange (forward secrecy) and AEAD only (Mozilla's
// "intermediate" list); TLS 1.3's suites are OpenSSL's defaults, all of them AEAD.
constexpr const char* kCiphers12 =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

std::shared_ptr<TlsContext> make_tls_context(const std::string& cert, const std::string& key, std::string& error) {
  auto tls = std::make_shared<TlsContext>();
  net::ssl::context& c = tls->ssl;
  c.set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 | net::ssl::context::no_sslv3 |
                net::ssl::context::no_tlsv1 | net::ssl::context::no_tlsv1_1 | net::ssl::context::no_compression |
                net::ssl::context::single_dh_use);
  SSL_CTX* native = c.native_handle();
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  SSL_CTX_set_options(native, SSL_OP_NO_RENEGOTIATION);
  if (SSL_CTX_set_cipher_list(native, kCiphers12) != 1) {
    error = "TLS: the cipher list was refused by this OpenSSL";
    return nullptr;
  }
  beast::error_code ec;
  c.use_certificate_chain_file(cert, ec);
  if (ec) {
    error = "cannot load the certificate --tls-cert '" + cert + "': " + ec.message();
    return nullptr;
  }
  c.use_private_key_file(key, net::ssl::context::pem, ec);
  if (ec) {
    error = "cannot load the private key --tls-key '" + key + "': " + ec.message();
    return nullptr;
  }
  if (SSL_CTX_check_private_key(native) != 1) {
    error = "the private key '" + key + "' does not match the certificate '" + cert + "'";
    return nullptr;
  }
  return tls;
}

void start_tls_session(TlsContext& tls, tcp::socket&& socket, Api& api, const HttpOptions& options, Registry& registry) {
  using Stream = net::ssl::stream<tcp::socket>;
  std::make_shared<Session<Stream>>(Stream(std::move(socket), tls.ssl), api, options, registry)->start();
}

#else

struct TlsContext {};

std::shared_ptr<TlsContext> make_tls_context(const std::string&, const std::string&, std::string& error) {
  error = "this pure-serve was built without TLS (OpenSSL's libssl-dev was not found): --tls-cert cannot be served";
  return nullptr;
}

void start_tls_session(TlsContext&, tcp::socket&&, Api&, const HttpOptions&, Registry&) {}

#endif

}  // namespace pure::serve::detail
