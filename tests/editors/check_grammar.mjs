// tests/editors/check_grammar.mjs — the editor grammar against the real lexer (ctest editors.grammar).
//
// Usage: node check_grammar.mjs PURE_DUMP_TOKENS REPO_ROOT NODE_MODULES
//
// Every examples/**/*.pure, this folder's edge_cases.pure, every ```pure block of docs/*.md and
// 300 seeded mutations of the examples are tokenised with the TextMate grammar
// (editors/pure_tokens.mjs) and with the real lexer (pure_dump_tokens, tests/editors/dump_tokens.cpp,
// which also lexes each {interpolation} as the parser does). Checked for every lexer token:
//   - the grammar has a token boundary at its start and its end (no grammar token straddles it);
//   - every grammar token inside it carries the scope its kind calls for (a keyword its keyword
//     scope, an operator its operator scope, a number constant.numeric, a name a variable/entity/
//     support scope, a text literal string.quoted.double from quote to quote, ...);
//   - it sits inside exactly as many interpolations (meta.interpolation.pure) as the lexer nests it.
// Between the lexer's tokens only white space and comments (comment.line.double-slash.pure) may be.
// Then the scopes of chosen tokens in chosen examples (CHOSEN below), that the grammar names
// exactly the standard functions of frontend/builtins.def, editors/vscode's manifest, and that
// docs/images/editor_bank_ledger.svg is what editors/render_svg.mjs draws with the grammar now.
// Prints one line per failure and the plain closing line `N passed, N failed` (files).
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadGrammar, tokenize } from "../../editors/pure_tokens.mjs";
import { renderSvg } from "../../editors/render_svg.mjs";

const [dumpTokens, root, nodeModules] = process.argv.slice(2);
if (!nodeModules) {
  console.error("usage: node check_grammar.mjs PURE_DUMP_TOKENS REPO_ROOT NODE_MODULES");
  process.exit(2);
}

const CONTROL = new Set(["if", "else", "while", "for", "in", "return", "break", "continue", "fail"]);
const LOGICAL = new Set(["and", "or", "not"]);
const DECLARING = new Set(["fn", "event", "query", "type", "list", "const", "let", "var"]);
const OPERATORS = {
  "->": "keyword.operator.arrow.pure", "..": "keyword.operator.range.pure",
  "+=": "keyword.operator.assignment.compound.pure", "-=": "keyword.operator.assignment.compound.pure",
  "*=": "keyword.operator.assignment.compound.pure", "/=": "keyword.operator.assignment.compound.pure",
  "%=": "keyword.operator.assignment.compound.pure",
  "<<": "keyword.operator.bitwise.shift.pure", ">>": "keyword.operator.bitwise.shift.pure",
  "==": "keyword.operator.comparison.pure", "!=": "keyword.operator.comparison.pure",
  "<=": "keyword.operator.comparison.pure", ">=": "keyword.operator.comparison.pure",
  "<": "keyword.operator.comparison.pure", ">": "keyword.operator.comparison.pure",
  "=": "keyword.operator.assignment.pure",
  "+": "keyword.operator.arithmetic.pure", "-": "keyword.operator.arithmetic.pure",
  "*": "keyword.operator.arithmetic.pure", "/": "keyword.operator.arithmetic.pure",
  "%": "keyword.operator.arithmetic.pure",
  "&": "keyword.operator.bitwise.pure", "|": "keyword.operator.bitwise.pure",
  "^": "keyword.operator.bitwise.pure", "~": "keyword.operator.bitwise.pure",
  ",": "punctuation.separator.comma.pure", ":": "punctuation.separator.colon.pure",
  ";": "punctuation.terminator.statement.pure", ".": "punctuation.accessor.pure",
  "(": "punctuation.section.parens.begin.pure", ")": "punctuation.section.parens.end.pure",
  "[": "punctuation.section.brackets.begin.pure", "]": "punctuation.section.brackets.end.pure",
  "{": "punctuation.section.braces.begin.pure", "}": "punctuation.section.braces.end.pure",
};

// A test on a token's scope list for a lexer token kind, and its description for messages.
function expectation(kind) {
  const has = (scope) => [(scopes) => scopes.includes(scope), scope];
  const some = (re) => [(scopes) => scopes.some((s) => re.test(s)), `a scope matching ${re}`];
  if (kind.startsWith("kw:")) {
    const word = kind.slice(3);
    if (CONTROL.has(word)) return has("keyword.control.pure");
    if (LOGICAL.has(word)) return has("keyword.operator.logical.pure");
    if (word === "true" || word === "false") return has("constant.language.boolean.pure");
    if (DECLARING.has(word)) return has(`storage.type.${word}.pure`);
    return has(`keyword.other.${word}.pure`);  // seq, by
  }
  if (kind.startsWith("op:")) {
    const op = kind.slice(3);
    if (!(op in OPERATORS)) return [() => false, `a scope for the operator '${op}' (none is known)`];
    if (op === "{" || op === "}") {
      // a brace of a block, or of an item literal nested in an interpolation
      return some(op === "{" ? /^punctuation\.section\.braces\.begin\.pure$/ : /^punctuation\.section\.braces\.end\.pure$/);
    }
    if (op === ":") return some(/^punctuation\.separator\.colon\.pure$/);
    return has(OPERATORS[op]);
  }
  switch (kind) {
    case "ident": return some(/^(variable|entity\.name|support\.(function|type))\./);
    case "int": return some(/^constant\.numeric\.(integer|hex)\.pure$/);
    case "num": return has("constant.numeric.float.pure");
    case "text": return has("string.quoted.double.pure");
    case "interp{": return has("punctuation.section.interpolation.begin.pure");
    case "interp}": return has("punctuation.section.interpolation.end.pure");
    // a bad byte, C's && || !, a malformed number; an unclosed text; a number out of range
    case "error": return some(/^(invalid\.illegal|string|constant\.numeric)\./);
  }
  return [() => false, `a known token kind (the lexer gave '${kind}')`];
}

const interpolations = (scopes) => scopes.filter((s) => s === "meta.interpolation.pure").length;

// The failures of one file.
// A docs snippet is checked from a file of its own: `label` names it and firstLine is its
// first line in the document.
function checkFile(file, loaded, label = path.relative(root, file), firstLine = 1) {
  const failures = [];
  const bytes = fs.readFileSync(file);
  const text = bytes.toString("utf8");
  const rel = label;
  const lineOf = (offset) => bytes.subarray(0, offset).toString("utf8").split("\n").length + firstLine - 1;
  const fail = (offset, message) => failures.push(`${rel}:${lineOf(offset)}: ${message}`);

  const grammarTokens = tokenize(loaded, text);
  const at = new Array(bytes.length).fill(null);  // the grammar token covering each byte
  const starts = new Set(), ends = new Set();
  for (const t of grammarTokens) {
    for (let b = t.begin; b < t.end; ++b) at[b] = t;
    starts.add(t.begin);
    ends.add(t.end);
  }

  const run = spawnSync(dumpTokens, [file], { encoding: "utf8", maxBuffer: 1 << 28 });
  if (run.status !== 0) return [`${rel}: pure_dump_tokens failed: ${run.stderr || run.error}`];
  const lexed = run.stdout.trim().split("\n").filter((l) => l).map((l) => {
    const [depth, kind, begin, end] = l.split(" ");
    return { depth: Number(depth), kind, begin: Number(begin), end: Number(end) };
  });
  if (lexed.length === 0) return [`${rel}: the lexer saw no token`];

  const covered = new Uint8Array(bytes.length);  // bytes inside a module-level lexer token
  for (const tok of lexed) {
    const source = bytes.subarray(tok.begin, tok.end).toString("utf8");
    const what = `${tok.kind} '${source}'`;
    if (tok.depth === 0) covered.fill(1, tok.begin, tok.end);
    if (!starts.has(tok.begin)) fail(tok.begin, `${what}: no grammar token starts where it starts`);
    if (!ends.has(tok.end)) fail(tok.begin, `${what}: no grammar token ends where it ends`);
    const [ok, wanted] = expectation(tok.kind);
    // the bytes of a text literal inside its own interpolations are checked as their tokens
    const inner = tok.kind === "text"
      ? lexed.filter((o) => o.depth === tok.depth + 1 && o.kind === "interp{" && o.begin > tok.begin && o.begin < tok.end)
          .map((open) => [open.begin, lexed.find((c) => c.depth === open.depth && c.kind === "interp}" && c.begin > open.begin).end])
      : [];
    const last = tok.end;
    for (let b = tok.begin; b < last; ++b) {
      if (inner.some(([from, to]) => b >= from && b < to)) continue;
      const g = at[b];
      if (!g) { fail(b, `${what}: byte ${b} has no grammar token`); break; }
      if (!ok(g.scopes)) {
        fail(b, `${what}: grammar token '${g.text}' has scopes ${g.scopes.join(" ")}; expected ${wanted}`);
        break;
      }
      if (interpolations(g.scopes) !== tok.depth) {
        fail(b, `${what}: grammar token '${g.text}' is inside ${interpolations(g.scopes)} interpolations, ` +
                `the lexer says ${tok.depth}`);
        break;
      }
    }
    if (tok.kind === "text") {
      const open = at[tok.begin], close = at[tok.end - 1];
      if (!open || !open.scopes.includes("punctuation.definition.string.begin.pure"))
        fail(tok.begin, `${what}: its opening quote is not punctuation.definition.string.begin.pure`);
      if (!close || !close.scopes.includes("punctuation.definition.string.end.pure"))
        fail(tok.begin, `${what}: its closing quote is not punctuation.definition.string.end.pure`);
    }
  }
  // between the tokens: white space and comments only, and a comment scoped as one
  for (let b = 0; b < bytes.length; ++b) {
    if (covered[b] || " \t\r\n".includes(String.fromCharCode(bytes[b]))) continue;
    const g = at[b];
    if (!g || !g.scopes.includes("comment.line.double-slash.pure")) {
      fail(b, `byte ${b} ('${String.fromCharCode(bytes[b])}') is in no lexer token, so in a comment, but the ` +
              `grammar gives ${g ? g.scopes.join(" ") : "no token"}`);
      while (b + 1 < bytes.length && bytes[b + 1] !== 10) ++b;  // once a line
    }
  }
  return failures;
}

// Chosen tokens and the scope each must have: in the first line of FILE that contains ANCHOR, the
// N-th occurrence (from 1) of TOKEN at or after where ANCHOR starts. Every grammar token that
// overlaps it must carry SCOPE.
const CHOSEN = [
  ["examples/escapes.pure", "// escapes:", "//", 1, "comment.line.double-slash.pure"],
  ["examples/escapes.pure", "// escapes:", "text literal", 1, "comment.line.double-slash.pure"],
  ["examples/escapes.pure", "fn describe", "fn", 1, "storage.type.fn.pure"],
  ["examples/escapes.pure", "fn describe", "describe", 1, "entity.name.function.pure"],
  ["examples/escapes.pure", "fn describe", "p", 1, "variable.parameter.pure"],
  ["examples/escapes.pure", "fn describe", "Point", 1, "entity.name.type.pure"],
  ["examples/escapes.pure", "fn describe", "text", 1, "support.type.primitive.pure"],
  ["examples/escapes.pure", "fn describe", "return", 1, "keyword.control.pure"],
  ["examples/escapes.pure", "fn describe", "\"", 1, "punctuation.definition.string.begin.pure"],
  ["examples/escapes.pure", "fn describe", "(", 2, "string.quoted.double.pure"],
  ["examples/escapes.pure", "fn describe", "{", 2, "punctuation.section.interpolation.begin.pure"],
  ["examples/escapes.pure", "fn describe", "p", 3, "meta.embedded.line.pure"],
  ["examples/escapes.pure", "{p.x}", "x", 1, "variable.other.property.pure"],
  ["examples/escapes.pure", "fn describe", "}", 1, "punctuation.section.interpolation.end.pure"],
  ["examples/escapes.pure", "print(\"tab:", "print", 1, "support.function.builtin.pure"],
  ["examples/escapes.pure", "print(\"tab:", "\\t", 1, "constant.character.escape.pure"],
  ["examples/escapes.pure", "print(\"tab:", "\\{", 1, "constant.character.escape.pure"],
  ["examples/escapes.pure", "print(\"tab:", "not interpolated", 1, "string.quoted.double.pure"],
  ["examples/escapes.pure", "print(\"code points", "\\u{1F600}", 1, "constant.character.escape.pure"],
  ["examples/escapes.pure", "print(\"code points", "\"", 2, "punctuation.definition.string.begin.pure"],
  ["examples/escapes.pure", "print(\"code points", "\"", 2, "meta.embedded.line.pure"],
  ["examples/escapes.pure", "print(\"code points", "len", 1, "support.function.method.pure"],
  ["examples/escapes.pure", "let p = Point", "let", 1, "storage.type.let.pure"],
  ["examples/escapes.pure", "let p = Point", "1.5", 1, "constant.numeric.float.pure"],
  ["examples/constants.pure", "const CREDIT_LIMIT", "const", 1, "storage.type.const.pure"],
  ["examples/constants.pure", "const CREDIT_LIMIT", "CREDIT_LIMIT", 1, "variable.other.constant.pure"],
  ["examples/constants.pure", "const CREDIT_LIMIT", "50_000", 1, "constant.numeric.integer.pure"],
  ["examples/constants.pure", "const NURAND_C", "0xFF", 1, "constant.numeric.hex.pure"],
  ["examples/constants.pure", "const NURAND_C", "&", 1, "keyword.operator.bitwise.pure"],
  ["examples/constants.pure", "for w in 1 ..", "..", 1, "keyword.operator.range.pure"],
  ["examples/constants.pure", "for w in 1 ..", "for", 1, "keyword.control.pure"],
  ["examples/bank_ledger.pure", "list accounts by", "list", 1, "storage.type.list.pure"],
  ["examples/bank_ledger.pure", "list accounts by", "accounts", 1, "entity.name.variable.list.pure"],
  ["examples/bank_ledger.pure", "list accounts by", "by", 1, "keyword.other.by.pure"],
  ["examples/bank_ledger.pure", "list accounts by", "num", 1, "support.type.primitive.pure"],
  ["examples/bank_ledger.pure", "list journal seq", "seq", 1, "keyword.other.seq.pure"],
  ["examples/bank_ledger.pure", "event ", "event", 1, "storage.type.event.pure"],
  ["tests/editors/edge_cases.pure", "let a =", "0x_FF", 1, "constant.numeric.hex.pure"],
  ["tests/editors/edge_cases.pure", "let a =", "1_000_000", 1, "constant.numeric.integer.pure"],
  ["tests/editors/edge_cases.pure", "let b =", "2.5e-3", 1, "constant.numeric.float.pure"],
  ["tests/editors/edge_cases.pure", "let b =", "1_0.2_5", 1, "constant.numeric.float.pure"],
  ["tests/editors/edge_cases.pure", "let n =", "0xFG", 1, "invalid.illegal.number.pure"],
  ["tests/editors/edge_cases.pure", "1e +", "1e", 1, "invalid.illegal.number.pure"],
  ["tests/editors/edge_cases.pure", "let n =", "0x1_F", 1, "constant.numeric.hex.pure"],
  ["tests/editors/edge_cases.pure", "let n =", "é", 1, "invalid.illegal.character.pure"],
  ["tests/editors/edge_cases.pure", "let e =", "\\u{D55C&}", 1, "invalid.illegal.escape.pure"],
  ["tests/editors/edge_cases.pure", "let e =", "\\q", 1, "invalid.illegal.escape.pure"],
  ["tests/editors/edge_cases.pure", "let e =", "if", 1, "keyword.control.pure"],
  ["tests/editors/edge_cases.pure", "let s =", "x}", 1, "string.quoted.double.pure"],
  ["tests/editors/edge_cases.pure", "let s =", "x}", 1, "meta.embedded.line.pure"],
  ["tests/editors/edge_cases.pure", "{ x: 1 }", "{", 1, "punctuation.section.braces.begin.pure"],
  ["tests/editors/edge_cases.pure", "{ x: 1 }", "}", 1, "punctuation.section.braces.end.pure"],
  ["tests/editors/edge_cases.pure", "}.x}", "x", 1, "variable.other.property.pure"],
  ["tests/editors/edge_cases.pure", "let t =", "unclosed", 1, "string.quoted.double.pure"],
  ["tests/editors/edge_cases.pure", "let u =", "let", 1, "storage.type.let.pure"],
  ["tests/editors/edge_cases.pure", "let w =", "{", 1, "invalid.illegal.unclosed-interpolation.pure"],
  ["tests/editors/edge_cases.pure", "let w =", "e", 2, "string.quoted.double.pure"],
  ["tests/editors/edge_cases.pure", "let w =", "+", 1, "string.quoted.double.pure"],  // up to the line's last quote
  ["tests/editors/edge_cases.pure", "let w =", "// an", 1, "comment.line.double-slash.pure"],
  ["tests/editors/edge_cases.pure", "let u =", "<<", 1, "keyword.operator.bitwise.shift.pure"],
  ["tests/editors/edge_cases.pure", "let v =", "&&", 1, "invalid.illegal.operator.pure"],
  ["tests/editors/edge_cases.pure", "let v =", "!", 1, "invalid.illegal.operator.pure"],
  ["tests/editors/edge_cases.pure", "query top", "query", 1, "storage.type.query.pure"],
  ["tests/editors/edge_cases.pure", "query top", "top", 1, "entity.name.function.pure"],
  ["tests/editors/edge_cases.pure", "query top", "->", 1, "keyword.operator.arrow.pure"],
  ["tests/editors/edge_cases.pure", "query top", "outcome", 1, "support.type.pure"],
  ["tests/editors/edge_cases.pure", "type Stock", "Row", 1, "entity.name.type.pure"],
  ["tests/editors/edge_cases.pure", "if a != b", "not", 1, "keyword.operator.logical.pure"],
  ["tests/editors/edge_cases.pure", "if a != b", "true", 1, "constant.language.boolean.pure"],
];

function checkChosen(loaded) {
  const failures = [];
  const cache = new Map();
  for (const [file, anchor, token, nth, scope] of CHOSEN) {
    if (!cache.has(file)) {
      const text = fs.readFileSync(path.join(root, file), "utf8");
      cache.set(file, { text, tokens: tokenize(loaded, text) });
    }
    const { text, tokens } = cache.get(file);
    const where = `${file}: '${token}' #${nth} from '${anchor}'`;
    const lines = text.split("\n");
    const index = lines.findIndex((l) => l.includes(anchor));
    if (index < 0) { failures.push(`${where}: no such line`); continue; }
    const line = lines[index];
    let col = line.indexOf(anchor) - 1;
    for (let k = 0; k < nth && (k === 0 || col >= 0); ++k) col = line.indexOf(token, col + 1);
    if (col < 0) { failures.push(`${where}: no such token`); continue; }
    const lineStart = Buffer.byteLength(lines.slice(0, index).map((l) => l + "\n").join(""));
    const begin = lineStart + Buffer.byteLength(line.slice(0, col));
    const end = begin + Buffer.byteLength(token);
    const parts = tokens.filter((t) => t.end > begin && t.begin < end);
    const wrong = parts.find((t) => !t.scopes.includes(scope));
    if (parts.length === 0 || wrong)
      failures.push(`${where}: expected ${scope}, the grammar gives ` +
                    (wrong ? `'${wrong.text}': ${wrong.scopes.join(" ")}` : "no token"));
  }
  return failures;
}

// The grammar's standard functions are exactly builtins.def's `function` rows.
function checkBuiltins() {
  const def = fs.readFileSync(path.join(root, "frontend/builtins.def"), "utf8");
  const wanted = [...def.matchAll(/^PURE_BUILTIN\(\s*\w+,\s*"(\w+)",\s*function,/gm)].map((m) => m[1]).sort();
  const grammar = JSON.parse(fs.readFileSync(path.join(root, "editors/vscode/syntaxes/pure.tmLanguage.json"), "utf8"));
  const rule = grammar.repository.call.patterns.find((p) => p.name === "support.function.builtin.pure");
  const named = rule.match.match(/\(([a-z0-9_|]+)\)/)[1].split("|").sort();
  const missing = wanted.filter((n) => !named.includes(n)), extra = named.filter((n) => !wanted.includes(n));
  if (wanted.length === 0) return ["frontend/builtins.def: no `function` rows found"];
  return missing.length || extra.length
    ? [`the grammar's standard functions differ from frontend/builtins.def: missing ${missing.join(" ") || "none"}, ` +
       `extra ${extra.join(" ") || "none"}`]
    : [];
}

// editors/vscode is an extension VS Code can load: the language `pure` for `.pure` files, its
// configuration (line comments, brackets, auto-closing pairs, regular expressions that compile),
// and the grammar at the path and scope name the manifest gives.
function checkExtension() {
  const dir = path.join(root, "editors/vscode");
  const failures = [];
  const readJson = (rel) => {
    try {
      return JSON.parse(fs.readFileSync(path.join(dir, rel), "utf8"));
    } catch (e) {
      failures.push(`editors/vscode/${rel}: ${e.message}`);
      return null;
    }
  };
  const manifest = readJson("package.json");
  if (!manifest) return failures;
  const language = (manifest.contributes?.languages ?? []).find((l) => l.id === "pure");
  const grammarEntry = (manifest.contributes?.grammars ?? []).find((g) => g.language === "pure");
  if (!language) return [...failures, "editors/vscode/package.json: contributes no language 'pure'"];
  if (!grammarEntry) return [...failures, "editors/vscode/package.json: contributes no grammar for 'pure'"];
  if (!(language.extensions ?? []).includes(".pure")) failures.push("package.json: the language 'pure' does not claim '.pure'");
  const grammar = readJson(grammarEntry.path);
  if (grammar && (grammar.scopeName !== grammarEntry.scopeName || grammar.scopeName !== "source.pure"))
    failures.push(`package.json: scope name ${grammarEntry.scopeName}, the grammar's is ${grammar.scopeName}`);
  const config = language.configuration ? readJson(language.configuration) : null;
  if (!config) return [...failures, "package.json: the language 'pure' has no readable configuration"];
  if (config.comments?.lineComment !== "//") failures.push("language-configuration.json: the line comment is not '//'");
  const pairs = (list) => (list ?? []).map((p) => (Array.isArray(p) ? p.join("") : p.open + p.close));
  for (const pair of ["{}", "[]", "()"])
    if (!pairs(config.brackets).includes(pair)) failures.push(`language-configuration.json: no bracket pair ${pair}`);
  for (const pair of ["{}", "[]", "()", '""'])
    if (!pairs(config.autoClosingPairs).includes(pair)) failures.push(`language-configuration.json: ${pair} does not auto-close`);
  for (const [name, re] of [["wordPattern", config.wordPattern], ...Object.entries(config.indentationRules ?? {})]) {
    try {
      new RegExp(re);
    } catch (e) {
      failures.push(`language-configuration.json: ${name}: ${e.message}`);
    }
  }
  return failures;
}

// The picture in docs/tooling.md is what the grammar draws now (the command is in docs/tooling.md).
const PICTURE = { svg: "docs/images/editor_bank_ledger.svg", source: "examples/bank_ledger.pure", first: 1, last: 33 };
function checkPicture(loaded) {
  const text = fs.readFileSync(path.join(root, PICTURE.source), "utf8");
  const drawn = renderSvg(loaded, text, PICTURE.first, PICTURE.last);
  const committed = fs.existsSync(path.join(root, PICTURE.svg)) ? fs.readFileSync(path.join(root, PICTURE.svg), "utf8") : null;
  if (drawn === committed) return [];
  return [`${PICTURE.svg} is ${committed === null ? "missing" : "not what the grammar draws now"}; make it again with ` +
          `node editors/render_svg.mjs ${PICTURE.source} ${PICTURE.svg} ${PICTURE.first}-${PICTURE.last}`];
}

function examples(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? examples(p) : e.name.endsWith(".pure") ? [p] : [];
  }).sort();
}

// The ```pure blocks of docs/*.md, each written to a file of its own: [{ file, label, firstLine }].
function docSnippets() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pure-editors-"));
  process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
  const snippets = [];
  for (const name of fs.readdirSync(path.join(root, "docs")).filter((n) => n.endsWith(".md")).sort()) {
    const doc = fs.readFileSync(path.join(root, "docs", name), "utf8");
    for (const m of doc.matchAll(/^```pure\n([\s\S]*?)^```/gm)) {
      const firstLine = doc.slice(0, m.index).split("\n").length + 1;
      const file = path.join(dir, `${snippets.length}.pure`);
      fs.writeFileSync(file, m[1]);
      snippets.push({ file, label: `docs/${name} (a pure block)`, firstLine });
    }
  }
  return snippets;
}

// Seeded mutations of the examples: 1 to 3 characters inserted, deleted or replaced (by ones the
// lexer treats specially), so that the grammar agrees with the lexer on broken code too, as an
// editor shows it while one types. Each is written to a file of its own; a failure names the
// example, the mutant's number and the seed.
const MUTATION_SEED = 38, MUTANTS = 300, MUTATION_CHARS = '"{}\\/ \n\t!&|.0_xe9-+<>=:;()[]#@éu';
function mutants(sources) {
  let state = MUTATION_SEED;
  const random = () => {  // mulberry32
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = (n) => Math.floor(random() * n);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pure-editors-mutants-"));
  process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
  const out = [];
  for (let k = 0; k < MUTANTS; ++k) {
    const source = sources[pick(sources.length)];
    let text = fs.readFileSync(source, "utf8");
    for (let edits = 1 + pick(3); edits > 0; --edits) {
      const at = pick(text.length + 1), unit = text.charCodeAt(at);
      if (unit >= 0xd800 && unit <= 0xdfff) continue;  // never split a surrogate pair
      const c = MUTATION_CHARS[pick(MUTATION_CHARS.length)], how = random();
      text = text.slice(0, at) + (how < 0.8 ? c : "") + text.slice(how < 0.5 ? at : at + 1);
    }
    const file = path.join(dir, `${k}.pure`);
    fs.writeFileSync(file, text);
    out.push({ file, label: `${path.relative(root, source)} mutant ${k} (seed ${MUTATION_SEED})`, firstLine: 1 });
  }
  return out;
}

const loaded = await loadGrammar(nodeModules);
const files = [...examples(path.join(root, "examples")), path.join(root, "tests/editors/edge_cases.pure")]
  .map((file) => ({ file, label: path.relative(root, file), firstLine: 1 }));
const snippets = docSnippets();
if (snippets.length === 0) console.log("FAIL docs/*.md: no ```pure block found");
const broken = mutants(files.map(({ file }) => file).filter((f) => f.startsWith(path.join(root, "examples"))));
files.push(...snippets, ...broken);
let passed = 0, failed = snippets.length ? 0 : 1;
for (const { file, label, firstLine } of files) {
  const failures = checkFile(file, loaded, label, firstLine);
  for (const f of failures.slice(0, 10)) console.log(`FAIL ${f}`);
  if (failures.length > 10) console.log(`FAIL ... and ${failures.length - 10} more in ${label}`);
  failures.length ? ++failed : ++passed;
}
for (const [name, failures] of [["chosen token scopes", checkChosen(loaded)], ["standard functions", checkBuiltins()],
                                 ["the VS Code extension", checkExtension()], ["the picture in docs", checkPicture(loaded)]]) {
  for (const f of failures) console.log(`FAIL ${f}`);
  failures.length ? ++failed : ++passed;
  console.log(`${failures.length ? "failed" : "ok"}: ${name}`);
}
console.log(`${files.length - snippets.length - broken.length} files, ${snippets.length} docs snippets and ` +
            `${broken.length} mutants tokenised and compared with the lexer, ${CHOSEN.length} chosen tokens`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
