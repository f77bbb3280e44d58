// editors/pure_tokens.mjs — tokenises Pure source with the TextMate grammar
// (editors/vscode/syntaxes/pure.tmLanguage.json) through vscode-textmate and vscode-oniguruma,
// the libraries VS Code itself highlights with. Shared by editors/render_svg.mjs (the picture in
// docs/tooling.md) and tests/editors/check_grammar.mjs (ctest editors.grammar).
//
// The npm packages are not in the repository: tests/editors/npm_setup.sh installs the pinned
// versions into a cache directory and prints its node_modules path, which callers pass here.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

export const GRAMMAR_PATH = path.join(path.dirname(new URL(import.meta.url).pathname),
                                      "vscode", "syntaxes", "pure.tmLanguage.json");

// The grammar, loaded with the packages found in nodeModules.
export async function loadGrammar(nodeModules, grammarPath = GRAMMAR_PATH) {
  const require = createRequire(path.join(path.resolve(nodeModules), "pure-editors.js"));
  const textmate = require("vscode-textmate");
  const oniguruma = require("vscode-oniguruma");
  const wasm = fs.readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm"));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (text) => new oniguruma.OnigString(text),
    }),
    loadGrammar: async (scopeName) => {
      if (scopeName !== "source.pure") return null;
      return textmate.parseRawGrammar(fs.readFileSync(grammarPath, "utf8"), grammarPath);
    },
  });
  const grammar = await registry.loadGrammar("source.pure");
  if (!grammar) throw new Error(`cannot load the grammar ${grammarPath}`);
  return { grammar, INITIAL: textmate.INITIAL };
}

// Tokens of a whole text, line by line as an editor sees it: [{ begin, end, line, text, scopes }],
// begin and end being byte offsets into the UTF-8 text (end exclusive), in order, covering every
// byte but the line breaks.
export function tokenize({ grammar, INITIAL }, text) {
  const tokens = [];
  let state = INITIAL;
  let lineStart = 0;  // byte offset of the line in the text
  const lines = text.split("\n");
  lines.forEach((line, number) => {
    const result = grammar.tokenizeLine(line, state);
    state = result.ruleStack;
    // byte offset of every UTF-16 index of the line
    const byteAt = new Array(line.length + 1);
    let bytes = 0;
    for (let i = 0; i < line.length; ++i) {
      byteAt[i] = bytes;
      const unit = line.charCodeAt(i);
      if (unit < 0x80) bytes += 1;
      else if (unit < 0x800) bytes += 2;
      else if (unit >= 0xd800 && unit < 0xdc00) { byteAt[++i] = bytes; bytes += 4; }  // a surrogate pair
      else bytes += 3;
    }
    byteAt[line.length] = bytes;
    for (const t of result.tokens) {
      const end = Math.min(t.endIndex, line.length);
      if (end <= t.startIndex) continue;
      tokens.push({ begin: lineStart + byteAt[t.startIndex], end: lineStart + byteAt[end], line: number + 1,
                    text: line.slice(t.startIndex, end), scopes: t.scopes });
    }
    lineStart += bytes + 1;
  });
  return tokens;
}
