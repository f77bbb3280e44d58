// editors/render_svg.mjs — draws Pure source highlighted by the editor grammar as an SVG picture,
// with the colours of VS Code's default dark theme: the picture in docs/tooling.md.
//
// Usage: node editors/render_svg.mjs FILE.pure OUT.svg [FIRST-LAST]
//   FIRST-LAST  the lines to draw (from 1, both included); all of them by default.
// The npm packages come from tests/editors/npm_setup.sh (run by this script; it installs them into
// a cache folder the first time) unless PURE_NODE_MODULES names a node_modules folder.
// The output depends only on the source, the grammar and the pinned packages: ctest editors.grammar
// renders the picture in docs/ again and fails if it differs from the committed one.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { loadGrammar, tokenize } from "./pure_tokens.mjs";

// The theme: a scope prefix and its colour; a token takes the colour of its innermost scope that
// has one (so code inside an interpolation, meta.embedded, is not drawn in the string's colour).
const THEME = [
  ["comment", "#6a9955"],
  ["constant.character.escape", "#d7ba7d"],
  ["punctuation.section.interpolation", "#569cd6"],
  ["meta.embedded", "#d4d4d4"],
  ["string", "#ce9178"],
  ["constant.numeric", "#b5cea8"],
  ["constant.language", "#569cd6"],
  ["keyword.control", "#c586c0"],
  ["keyword.operator.logical", "#569cd6"],
  ["keyword.operator", "#d4d4d4"],
  ["keyword.other", "#569cd6"],
  ["storage.type", "#569cd6"],
  ["entity.name.function", "#dcdcaa"],
  ["support.function", "#dcdcaa"],
  ["entity.name.type", "#4ec9b0"],
  ["support.type", "#4ec9b0"],
  ["variable.other.constant", "#4fc1ff"],
  ["entity.name.variable", "#9cdcfe"],
  ["variable", "#9cdcfe"],
  ["invalid", "#f44747"],
];
const FOREGROUND = "#d4d4d4", BACKGROUND = "#1e1e1e", GUTTER = "#858585";
const FONT_SIZE = 14, LINE_HEIGHT = 20, CHAR_WIDTH = 8.43, PAD = 12;  // DejaVu Sans Mono's advance at 14 px

function colour(scopes) {
  for (let i = scopes.length - 1; i >= 0; --i) {
    const match = THEME.find(([prefix]) => scopes[i] === prefix || scopes[i].startsWith(prefix + "."));
    if (match) return match[1];
  }
  return FOREGROUND;
}

// Spaces are drawn as no-break spaces: renderers that ignore xml:space would collapse indentation.
const escapeXml = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/ /g, "&#160;");

// The SVG text of lines first..last (from 1) of text.
export function renderSvg(loaded, text, first = 1, last = Infinity) {
  const lines = text.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  last = Math.min(last, lines.length);
  const tokens = tokenize(loaded, text);
  const gutter = String(last).length + 2;  // columns for the line numbers
  const columns = Math.max(...lines.slice(first - 1, last).map((l) => l.replace(/\t/g, "  ").length));
  const width = Math.ceil(2 * PAD + (gutter + columns + 1) * CHAR_WIDTH);
  const height = 2 * PAD + (last - first + 1) * LINE_HEIGHT;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`,
    `<rect width="100%" height="100%" rx="6" fill="${BACKGROUND}"/>`,
    `<g font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="${FONT_SIZE}" xml:space="preserve" style="white-space: pre">`,
  ];
  for (let n = first; n <= last; ++n) {
    const y = PAD + (n - first) * LINE_HEIGHT + Math.round(LINE_HEIGHT * 0.75);
    const runs = [];  // [fill, text]: neighbouring tokens of one colour drawn as one run
    for (const t of tokens.filter((t) => t.line === n)) {
      const fill = colour(t.scopes), body = t.text.replace(/\t/g, "  ");
      if (runs.length && runs[runs.length - 1][0] === fill) runs[runs.length - 1][1] += body;
      else runs.push([fill, body]);
    }
    const spans = runs.map(([fill, body]) =>
      fill === FOREGROUND ? escapeXml(body) : `<tspan fill="${fill}">${escapeXml(body)}</tspan>`);
    out.push(`<text x="${PAD}" y="${y}" fill="${FOREGROUND}">` +
             `<tspan fill="${GUTTER}">${escapeXml(String(n).padStart(gutter - 2) + "  ")}</tspan>${spans.join("")}</text>`);
  }
  out.push("</g>", "</svg>", "");
  return out.join("\n");
}

// The node_modules folder with the pinned packages: PURE_NODE_MODULES, else npm_setup.sh's.
export function nodeModules() {
  if (process.env.PURE_NODE_MODULES) return process.env.PURE_NODE_MODULES;
  const setup = path.join(path.dirname(new URL(import.meta.url).pathname), "..", "tests", "editors", "npm_setup.sh");
  const run = spawnSync("bash", [setup], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  if (run.status !== 0) throw new Error("tests/editors/npm_setup.sh could not install the npm packages");
  return run.stdout.trim();
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const [input, output, range] = process.argv.slice(2);
  if (!output || (range && !/^\d+-\d+$/.test(range))) {
    console.error("usage: node editors/render_svg.mjs FILE.pure OUT.svg [FIRST-LAST]");
    process.exit(2);
  }
  const [first, last] = range ? range.split("-").map(Number) : [1, Infinity];
  const loaded = await loadGrammar(nodeModules());
  fs.writeFileSync(output, renderSvg(loaded, fs.readFileSync(input, "utf8"), first, last));
  console.log(`${output}: lines ${first}-${Math.min(last, fs.readFileSync(input, "utf8").split("\n").length)} of ${input}`);
}
