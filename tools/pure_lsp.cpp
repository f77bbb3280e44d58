// tools/pure_lsp.cpp — the `pure-lsp` command: the language server on stdin and stdout, its own
// notes on stderr (lsp/lsp.h). Editors start it; it takes no options but --version and --help.
#include <cstdio>
#include <cstring>

#include "lsp/lsp.h"

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--version") == 0) {
      std::puts("pure-lsp 0.1");
      return 0;
    }
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::puts("usage: pure-lsp\n  the Pure language server: Language Server Protocol on stdin and stdout (docs/tooling.md)");
      return 0;
    }
    if (std::strcmp(argv[i], "--stdio") != 0) {  // --stdio: what some editors pass; stdio is the only transport
      std::fprintf(stderr, "pure-lsp: unknown option '%s' (pure-lsp takes no options; see --help)\n", argv[i]);
      return 2;
    }
  }
  return pure::lsp::serve(stdin, stdout, stderr);
}
