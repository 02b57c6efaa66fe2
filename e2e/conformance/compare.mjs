// compare.mjs: reads the conformance suite's result folders under OUT and
// compares every run through the gateway with the direct run of the same
// suite and spec version. Every check that passed directly must pass
// through the gateway. Writes OUT/summary.json and prints a table; exits 1
// on any regression.
//
//   node compare.mjs OUT
import { readdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";

const out = process.argv[2];
const runs = {}; // run name -> {scenario -> {passed, failed, ok: [check ids]}}
for (const run of readdirSync(out, { withFileTypes: true })) {
  if (!run.isDirectory()) continue;
  const scenarios = {};
  for (const dir of readdirSync(join(out, run.name))) {
    const file = join(out, run.name, dir, "checks.json");
    if (!existsSync(file)) continue;
    // Folder names are server-<scenario>-<timestamp>.
    const scenario = dir.replace(/^server-/, "").replace(/-\d{4}-\d{2}-\d{2}T.*$/, "");
    const checks = JSON.parse(readFileSync(file, "utf8"));
    const s = { passed: 0, failed: 0, ok: [], bad: [] };
    checks.forEach((c, i) => {
      const key = `${c.id}#${i}`;
      if (c.status === "SUCCESS") { s.passed++; s.ok.push(key); }
      else if (c.status === "FAILURE") { s.failed++; s.bad.push(key); }
    });
    scenarios[scenario] = s;
  }
  runs[run.name] = scenarios;
}

// Run names are <path>-<suite>-<spec>, path one of direct, cmd, url.
const regressions = [];
const table = [];
for (const name of Object.keys(runs).sort()) {
  const [path, ...rest] = name.split("-");
  const key = rest.join("-");
  const total = Object.values(runs[name]).reduce((a, s) => [a[0] + s.passed, a[1] + s.failed], [0, 0]);
  table.push({ run: name, scenarios: Object.keys(runs[name]).length, passed: total[0], failed: total[1] });
  if (path === "direct") continue;
  const direct = runs[`direct-${key}`];
  if (!direct) { regressions.push(`${name}: no direct run to compare with`); continue; }
  for (const [scenario, d] of Object.entries(direct)) {
    const g = runs[name][scenario];
    for (const check of d.ok) {
      if (!g || !g.ok.includes(check)) regressions.push(`${name}: ${scenario}: ${check} passed directly, not through the gateway`);
    }
  }
}
const summary = { runs, table, regressions };
writeFileSync(join(out, "summary.json"), JSON.stringify(summary, null, 2) + "\n");
for (const r of table) console.log(`${r.run.padEnd(34)} ${String(r.scenarios).padStart(3)} scenarios  ${String(r.passed).padStart(4)} passed  ${String(r.failed).padStart(3)} failed`);
console.log("");
for (const r of regressions) console.log(`REGRESSION ${r}`);
const passed = table.reduce((a, r) => a + r.passed, 0), failed = table.reduce((a, r) => a + r.failed, 0);
console.log(`${regressions.length} checks passed directly and not through the gateway`);
console.log(`conformance: ${passed} passed, ${failed} failed`);
process.exit(regressions.length === 0 ? 0 : 1);
