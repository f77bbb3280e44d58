// serve/console.cpp — serves the console's built-in files (console.h). The HTML page may
// load only what comes from this server (Content-Security-Policy); every file is revalidated
// on use (Cache-Control: no-cache) against its ETag, so a new pure-serve's console shows at once.
#include "serve/console.h"

#include <string>

namespace pure::serve {

namespace {

constexpr std::string_view kPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// If-None-Match: "*" or a comma-separated list of (possibly weak, W/"...") entity tags.
bool etag_matches(std::string_view header, std::string_view etag) {
  while (!header.empty()) {
    size_t comma = header.find(',');
    std::string_view one = trim(header.substr(0, comma));
    if (one.substr(0, 2) == "W/") one.remove_prefix(2);
    if (one == "*" || one == etag) return true;
    if (comma == std::string_view::npos) break;
    header.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

bool console_route(std::string_view method, std::string_view path, std::string_view if_none_match, Response& out) {
  if (path != "/" && path.substr(0, 9) != "/console/") return false;
  const EmbeddedFile* file = nullptr;
  for (size_t i = 0; i < kEmbeddedFileCount; ++i)
    if (path == kEmbeddedFiles[i].url) file = &kEmbeddedFiles[i];
  out = Response{};
  if (!file) {
    std::string names;
    for (size_t i = 0; i < kEmbeddedFileCount; ++i) names += std::string(names.empty() ? "" : ", ") + kEmbeddedFiles[i].url;
    out.status = 404;
    out.body = error_body("no console file " + std::string(path) + " (the console has " + names + ")");
    return true;
  }
  if (method != "GET" && method != "HEAD") {
    out.status = 405;
    out.body = error_body("the console's files take GET, not " + std::string(method));
    out.allow = "GET, HEAD";
    return true;
  }
  out.content_type = file->content_type;
  out.headers.emplace_back("ETag", file->etag);
  out.headers.emplace_back("Cache-Control", "no-cache");  // (X-Content-Type-Options: on every reply, http.cpp)
  if (path == "/") out.headers.emplace_back("Content-Security-Policy", std::string(kPolicy));
  if (!if_none_match.empty() && etag_matches(if_none_match, file->etag)) {
    out.status = 304;  // the browser's copy is current: no body
    return true;
  }
  out.body.assign(file->data, file->size);
  return true;
}

}  // namespace pure::serve
