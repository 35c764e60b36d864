// StyLua over the plugin's Lua: `node tests/stylua.cjs --check FILE...` prints every file StyLua
// would change (exit 1), `--write` rewrites them in place (atomically: a temporary file renamed).
// StyLua is the npm package @johnnymorganz/stylua, StyLua compiled to WebAssembly (the native
// binaries download from GitHub, which the CI machines cannot reach). Settings: .stylua.toml.
"use strict";
const fs = require("fs");
const path = require("path");
const stylua = require(process.env.STYLUA_MODULE || "@johnnymorganz/stylua");

const ENUMS = {
  line_endings: stylua.LineEndings,
  indent_type: stylua.IndentType,
  quote_style: stylua.QuoteStyle,
  call_parentheses: stylua.CallParenType,
  syntax: stylua.LuaVersion,
  collapse_simple_statement: stylua.CollapseSimpleStatement,
};

function config(file) {
  const cfg = stylua.Config.new();
  for (const raw of fs.readFileSync(file, "utf8").split("\n")) {
    const line = raw.replace(/#.*/, "").trim();
    if (!line) continue;
    const m = line.match(/^([a-z_]+)\s*=\s*(.+)$/);
    if (!m) throw new Error(`${file}: cannot read ${JSON.stringify(raw)}`);
    const [, key, value] = m;
    if (ENUMS[key]) {
      const name = JSON.parse(value);
      if (!(name in ENUMS[key])) throw new Error(`${file}: ${key} = ${value} is not a StyLua value`);
      cfg[key] = ENUMS[key][name];
    } else if (/^\d+$/.test(value)) {
      cfg[key] = Number(value);
    } else {
      throw new Error(`${file}: ${key} is not a setting this script knows`);
    }
  }
  return cfg;
}

function main(argv) {
  const mode = argv[0];
  if (mode !== "--check" && mode !== "--write") {
    console.error("usage: stylua.cjs --check|--write FILE...");
    return 2;
  }
  // formatCode takes its Config (wasm-bindgen moves it): one per file.
  const settings = path.join(__dirname, "..", ".stylua.toml");
  let differ = 0;
  for (const file of argv.slice(1)) {
    const text = fs.readFileSync(file, "utf8");
    let out;
    try {
      out = stylua.formatCode(text, config(settings), null, stylua.OutputVerification.None);
    } catch (e) {
      console.error(`${file}: ${e}`);
      differ++;
      continue;
    }
    if (out === text) continue;
    differ++;
    if (mode === "--write") {
      const tmp = `${file}.stylua-tmp`;
      fs.writeFileSync(tmp, out);
      fs.renameSync(tmp, file);
      console.log(`formatted ${file}`);
    } else {
      console.log(`StyLua would reformat ${file}`);
    }
  }
  if (mode === "--check") {
    console.log(`stylua: ${argv.length - 1} files checked, ${differ} to reformat`);
    return differ ? 1 : 0;
  }
  return 0;
}

process.exitCode = main(process.argv.slice(2));
