// serve/access.h — who may ask pure-serve what (docs/serve.md, "Security"): the tokens of
// --token-file with their scopes, the Host names served (--allow-host), same-origin and JSON-body
// checks. Plain string work, no HTTP library: api.cpp applies it to each request.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pure::serve {

// A token's scopes nest: admin includes write, write includes read.
enum Scope : uint8_t { kScopeRead = 1, kScopeWrite = 2, kScopeAdmin = 4 };
const char* scope_name(uint8_t scope);  // the highest scope in the set: "read", "write", "admin"

struct Token {
  std::string secret;
  uint8_t scopes = 0;  // closed under the nesting (write -> write|read)
};

// Parses a token file: one token a line, `SCOPE[,SCOPE] TOKEN` or a lone TOKEN (a write token, the
// old one-token file); `#` starts a comment line; blank lines are skipped. A token must be
// printable ASCII without spaces and short enough to fit header_limit in an Authorization
// header. "" or the problem, naming the line (never the token).
std::string parse_token_file(std::string_view text, size_t header_limit, std::vector<Token>& out);

struct Tokens {
  std::vector<Token> tokens;
  bool writes_need_token() const { return !tokens.empty(); }
  // Reads (lists, queries, the interface, source, metrics) need a token once any read-only token
  // exists: a file of write tokens alone keeps reads open, as before scopes.
  bool reads_need_token() const;

  enum class Outcome : uint8_t { Missing, WrongScheme, Invalid, Valid };
  struct Check {
    Outcome outcome = Outcome::Missing;
    uint8_t scopes = 0;  // of the valid token
  };
  // The Authorization header against every token (each compared in time independent of where it
  // differs, all of them whatever matched). The scheme is case-insensitive.
  Check check(std::string_view authorization) const;
};

// The Host names a server answers to: those of its listen address (loopback: 127.0.0.1,
// localhost and [::1]; every interface: localhost and any IP literal; else the address) plus
// the --allow-host names ('*': any). Ports are not compared (a tunnel or a port mapping changes
// them; a rebinding attack needs a name).
struct HostRules {
  std::vector<std::string> names;  // lower case; IPv6 in brackets
  bool any_ip = false;
  bool any = false;
  bool allows(std::string_view host_header) const;
  bool allows_uncached(std::string_view host_header) const;
  std::string list() const;  // for messages: "127.0.0.1, localhost, [::1]"
};
// listen_address as given to --listen (without brackets); allow: the --allow-host values. "" or
// the problem with an --allow-host value.
std::string make_host_rules(std::string_view listen_address, const std::vector<std::string>& allow, HostRules& out);
bool is_loopback_address(std::string_view address);

// Same origin: Origin is SCHEME://HOST with the request's own Host (case-insensitive).
bool same_origin(std::string_view origin, std::string_view host, bool tls);
// application/json, with parameters (charset=utf-8), any case.
bool is_json_content_type(std::string_view content_type);

}  // namespace pure::serve
