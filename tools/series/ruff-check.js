#!/usr/bin/env node
// ruff check through ruff's WebAssembly build (npm @astral-sh/ruff-wasm-nodejs),
// for hosts without a ruff binary (Debian 12 has none). Prints findings as
// `ruff check --output-format pylint` does: path:row: [CODE] message.
// Usage: ruff-check.js MODULE_DIR FILE...
// Rules: ruff's defaults (E4, E7, E9, F), as the tree has no ruff config.
"use strict";
const fs = require("fs");

const [moduleDir, ...files] = process.argv.slice(2);
if (!moduleDir || files.length === 0) {
	console.error("usage: ruff-check.js MODULE_DIR FILE...");
	process.exit(2);
}
const ruff = require(moduleDir);
const workspace = new ruff.Workspace({ lint: { select: ["E4", "E7", "E9", "F"] } },
	ruff.PositionEncoding.Utf8);
let found = 0;
for (const file of files) {
	for (const d of workspace.check(fs.readFileSync(file, "utf8"))) {
		console.log(`${file}:${d.start_location.row}: [${d.code || "E999"}] ${d.message}`);
		found++;
	}
}
process.exit(found ? 1 : 0);
