// serve/console.h — the web console's files (serve/console/), built into pure-serve
// by cmake/embed_files.cmake, and the route that serves them: GET / and GET /console/FILE, with
// an ETag so that browsers revalidate cheaply (304). Knows nothing of Beast or Boost.JSON.
#pragma once
#include <cstddef>
#include <string_view>

#include "serve/api.h"

namespace pure::serve {

struct EmbeddedFile {
  const char* url;           // "/", "/console/console.js", ...
  const char* content_type;  // "text/html; charset=utf-8", ...
  const char* etag;          // quoted: "\"0123456789abcdef\""
  const char* data;
  size_t size;
};
extern const EmbeddedFile kEmbeddedFiles[];
extern const size_t kEmbeddedFileCount;

// True when path is the console's (/ or /console/...): then out is the answer (200, 304, 404
// or 405).
bool console_route(std::string_view method, std::string_view path, std::string_view if_none_match, Response& out);

}  // namespace pure::serve
