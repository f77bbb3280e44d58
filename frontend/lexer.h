// frontend/lexer.h — turns source text into tokens. Never fails: bad bytes become Error tokens.
// Depends on frontend/token.h and frontend/diagnostic.h.
#pragma once
#include <vector>

#include "frontend/diagnostic.h"
#include "frontend/token.h"

namespace pure {

// Lexes text[begin, end) of source; token locations are positions in the whole source.
// Errors are reported to diags; the token list always ends with Tok::End.
std::vector<Token> lex(const Source& source, Diagnostics& diags, uint32_t begin, uint32_t end);
std::vector<Token> lex(const Source& source, Diagnostics& diags);

}  // namespace pure
