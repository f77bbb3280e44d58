// serve/access.cpp — token files and scopes, the Host names served, same-origin and
// JSON-body checks (access.h).
#include "serve/access.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace pure::serve {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower(c);
  return out;
}

uint8_t close_scopes(uint8_t s) {
  if (s & kScopeAdmin) s |= kScopeWrite;
  if (s & kScopeWrite) s |= kScopeRead;
  return s;
}

bool is_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool is_ipv4(std::string_view s) {
  int parts = 0;
  while (true) {
    size_t dot = s.find('.');
    std::string_view part = s.substr(0, dot);
    if (!is_digits(part) || part.size() > 3 || std::stoi(std::string(part)) > 255) return false;
    ++parts;
    if (dot == std::string_view::npos) break;
    s.remove_prefix(dot + 1);
  }
  return parts == 4;
}

// "[...]" of hex digits, colons and dots (an IPv6 literal, perhaps with an IPv4 tail)
bool is_bracketed_ipv6(std::string_view s) {
  if (s.size() < 4 || s.front() != '[' || s.back() != ']') return false;
  for (char c : s.substr(1, s.size() - 2))
    if (!((c >= '0' && c <= '9') || (lower(c) >= 'a' && lower(c) <= 'f') || c == ':' || c == '.')) return false;
  return true;
}

// The name part of a Host header (without the port); empty when malformed.
std::string_view host_name(std::string_view host) {
  if (!host.empty() && host.front() == '[') {
    size_t close = host.find(']');
    if (close == std::string_view::npos) return {};
    std::string_view rest = host.substr(close + 1);
    if (!rest.empty() && (rest.front() != ':' || !is_digits(rest.substr(1)))) return {};
    return host.substr(0, close + 1);
  }
  size_t colon = host.rfind(':');
  if (colon != std::string_view::npos) {
    if (!is_digits(host.substr(colon + 1))) return {};
    host = host.substr(0, colon);
  }
  return host;
}

}  // namespace

const char* scope_name(uint8_t scope) {
  if (scope & kScopeAdmin) return "admin";
  if (scope & kScopeWrite) return "write";
  if (scope & kScopeRead) return "read";
  return "none";
}

std::string parse_token_file(std::string_view text, size_t header_limit, std::vector<Token>& out) {
  out.clear();
  std::vector<size_t> lines;  // the line of each token, for duplicates
  size_t number = 0;
  constexpr std::string_view kHeader = "Authorization: Bearer \r\n";
  while (!text.empty() || number == 0) {
    ++number;
    size_t nl = text.find('\n');
    std::string_view line = trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    std::string where = "line " + std::to_string(number) + ": ";
    if (line.empty() || line.front() == '#') {
      if (text.empty()) break;
      continue;
    }
    std::vector<std::string_view> words;
    while (!line.empty()) {
      size_t gap = line.find_first_of(" \t");
      words.push_back(line.substr(0, gap));
      line = gap == std::string_view::npos ? std::string_view() : trim(line.substr(gap));
    }
    if (words.size() > 2)
      return where + "expected 'SCOPE[,SCOPE] TOKEN' or a lone TOKEN, got " + std::to_string(words.size()) + " words";
    Token t;
    t.scopes = kScopeWrite;  // a lone token: the old one-token file
    if (words.size() == 2) {
      t.scopes = 0;
      std::string_view list = words[0];
      while (true) {
        size_t comma = list.find(',');
        std::string_view s = list.substr(0, comma);
        if (s == "read") t.scopes |= kScopeRead;
        else if (s == "write") t.scopes |= kScopeWrite;
        else if (s == "admin") t.scopes |= kScopeAdmin;
        else return where + "unknown scope '" + std::string(s) + "' (the scopes are read, write and admin)";
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
      }
    }
    t.scopes = close_scopes(t.scopes);
    std::string_view secret = words.back();
    for (char c : secret) {
      unsigned char u = static_cast<unsigned char>(c);
      if (u < 0x21 || u > 0x7e) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", u);
        return where + "the token holds the byte " + hex +
               ", which an Authorization header cannot carry (a token is printable ASCII without spaces)";
      }
    }
    if (secret.size() + kHeader.size() >= header_limit)
      return where + "the token is " + std::to_string(secret.size()) + " bytes: 'Authorization: Bearer TOKEN' could never fit " +
             "--header-limit (" + std::to_string(header_limit) + " bytes)";
    for (size_t i = 0; i < out.size(); ++i)
      if (out[i].secret == secret) return where + "the same token as line " + std::to_string(lines[i]);
    t.secret = std::string(secret);
    out.push_back(std::move(t));
    lines.push_back(number);
    if (text.empty()) break;
  }
  if (out.empty()) return "holds no token (a line 'SCOPE[,SCOPE] TOKEN' or a lone TOKEN; '#' starts a comment)";
  return "";
}

bool Tokens::reads_need_token() const {
  return std::any_of(tokens.begin(), tokens.end(), [](const Token& t) { return t.scopes == kScopeRead; });
}

Tokens::Check Tokens::check(std::string_view authorization) const {
  Check c;
  authorization = trim(authorization);
  if (authorization.empty()) return c;
  size_t space = authorization.find(' ');
  if (iequal(authorization, "bearer")) {  // the scheme without a token: an empty token, not valid
    c.outcome = Outcome::Invalid;
    return c;
  }
  if (space == std::string_view::npos || !iequal(authorization.substr(0, space), "bearer")) {
    c.outcome = Outcome::WrongScheme;
    return c;
  }
  std::string_view given = trim(authorization.substr(space + 1));
  // Every token compared, each over its own length whatever the bytes: the time says nothing of
  // where a guess goes wrong, nor which token matched.
  uint8_t scopes = 0;
  for (const Token& t : tokens) {
    const std::string& s = t.secret;
    unsigned diff = given.size() != s.size();
    for (size_t i = 0; i < s.size(); ++i)
      diff |= static_cast<unsigned char>(s[i]) ^ static_cast<unsigned char>(i < given.size() ? given[i] : 0);
    unsigned match = 0u - static_cast<unsigned>(diff == 0);  // all ones when equal
    scopes |= static_cast<uint8_t>(t.scopes & match);
  }
  c.outcome = scopes ? Outcome::Valid : Outcome::Invalid;
  c.scopes = scopes;
  return c;
}

bool is_loopback_address(std::string_view a) { return a.substr(0, 4) == "127." || a == "::1"; }

std::string make_host_rules(std::string_view listen_address, const std::vector<std::string>& allow, HostRules& out) {
  out = HostRules{};
  if (is_loopback_address(listen_address)) {
    out.names = {"127.0.0.1", "localhost", "[::1]"};
    if (listen_address != "127.0.0.1" && listen_address != "::1") out.names.push_back(std::string(listen_address));
  } else if (listen_address == "0.0.0.0" || listen_address == "::") {
    out.names = {"localhost"};
    out.any_ip = true;
  } else {
    out.names = {listen_address.find(':') != std::string_view::npos ? "[" + to_lower(listen_address) + "]"
                                                                   : to_lower(listen_address)};
  }
  for (const std::string& a : allow) {
    if (a == "*") {
      out.any = true;
      continue;
    }
    bool ok = !a.empty() && (is_bracketed_ipv6(a) || std::all_of(a.begin(), a.end(), [](char c) {
                return (lower(c) >= 'a' && lower(c) <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
              }));
    if (!ok)
      return "--allow-host takes a host name without a port (example.com, 10.0.0.5, [fd00::5]) or '*', got '" + a + "'";
    out.names.push_back(to_lower(a));
  }
  return "";
}

bool HostRules::allows(std::string_view host_header) const {
  if (any) return true;
  // A connection sends the same Host again and again: the last one allowed on this thread is
  // compared first (about a tenth of the work of parsing it; docs/serve.md, Figures).
  thread_local const HostRules* last_rules = nullptr;  // trivial thread_locals: no guard on each use
  thread_local size_t last_size = 0;
  thread_local char last_allowed[128];
  if (last_rules == this && host_header.size() == last_size &&
      std::memcmp(host_header.data(), last_allowed, last_size) == 0)
    return true;
  if (!allows_uncached(host_header)) return false;
  if (host_header.size() <= sizeof last_allowed) {
    last_rules = this;
    last_size = host_header.size();
    std::memcpy(last_allowed, host_header.data(), last_size);
  }
  return true;
}

bool HostRules::allows_uncached(std::string_view host_header) const {
  std::string_view name = host_name(trim(host_header));
  if (name.empty()) return false;
  if (any_ip && (is_ipv4(name) || is_bracketed_ipv6(name))) return true;
  for (const std::string& n : names)
    if (iequal(name, n)) return true;
  return false;
}

std::string HostRules::list() const {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  if (any_ip) out += ", any IP address";
  return out;
}

bool same_origin(std::string_view origin, std::string_view host, bool tls) {
  std::string_view scheme = tls ? "https://" : "http://";
  origin = trim(origin);
  host = trim(host);
  if (host.empty() || origin.size() != scheme.size() + host.size()) return false;
  return iequal(origin.substr(0, scheme.size()), scheme) && iequal(origin.substr(scheme.size()), host);
}

bool is_json_content_type(std::string_view t) {
  constexpr std::string_view kJson = "application/json";  // as nearly every client writes it
  if (t.substr(0, kJson.size()) == kJson && (t.size() == kJson.size() || t[kJson.size()] == ';')) return true;
  t = trim(t.substr(0, t.find(';')));
  return iequal(t, "application/json");
}

}  // namespace pure::serve
