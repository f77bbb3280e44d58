// lsp/lsp.h — pure-lsp's server: the Language Server Protocol over a pair of streams (JSON-RPC
// messages framed by Content-Length headers), answering from lsp/analysis.h. The interface of the
// layer; tools/pure_lsp.cpp runs it on stdin and stdout. See docs/tooling.md.
#pragma once
#include <cstdio>

namespace pure::lsp {

// Serves until the client sends `exit` or closes `in`. Returns the process's exit code: 0 after
// `shutdown` then `exit`, 1 when `exit` came without `shutdown` or the input ended first (as the
// protocol asks). Never throws; a malformed message gets an error reply (or, without an id, a
// line on `log`) and the server goes on.
int serve(std::FILE* in, std::FILE* out, std::FILE* log);

}  // namespace pure::lsp
