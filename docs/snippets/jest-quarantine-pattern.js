// Prints a --testNamePattern that leaves out the quarantined tests. jest matches a test's
// full name: its describe blocks and its own name joined by spaces, without the file that
// starts the bot's test_id (`file › suite › name`).
const fs = require("node:fs");

const SEPARATOR = " \u203a ";
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function fullName(testId) {
  const [file, ...names] = testId.split(SEPARATOR);
  return names.length ? names.join(" ") : file;
}

function pattern(list) {
  const names = list.tests.map((t) => escape(fullName(t.test_id)));
  return names.length ? `^(?!(?:${names.join("|")})$)` : "";
}

const list = JSON.parse(fs.readFileSync(process.argv[2] || "quarantined.json", "utf8"));
process.stdout.write(pattern(list));
