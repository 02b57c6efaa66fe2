#!/usr/bin/env node
// mcpseal's npm launcher: `npx -y mcpseal@VERSION run -- <server>` lands here.
//
// It runs the mcpseal binary of this platform from the optional dependency
// @mcpseal/<platform>-<arch>, after checking that the binary's SHA-256 is
// the one recorded, at release time, in this package's digests.json, and
// that the platform package's version is this package's. A swapped,
// altered or mismatched platform package is refused; nothing is fetched,
// nothing is run at install time, and nothing else is executed.
//
// stdin, stdout and stderr are handed to the binary as they are (stdout is
// an MCP client's protocol channel): this launcher never writes to stdout.
// Its exit status is the binary's; a signal that ends the binary ends the
// launcher the same way.
"use strict";

const crypto = require("crypto");
const fs = require("fs");
const path = require("path");
const { spawn } = require("child_process");

// A release binary is a few tens of MiB; anything larger is not ours.
const MAX_BINARY = 512 * 1024 * 1024;
const EXIT_REFUSED = 7; // as `mcpseal run` does when it refuses to start

function fail(msg, hint) {
  process.stderr.write(`mcpseal: error: ${msg}\n`);
  if (hint) process.stderr.write(`mcpseal: hint: ${hint}\n`);
  process.exit(EXIT_REFUSED);
}

// A package.json or digests.json is a few hundred bytes; 1 MiB is plenty.
const MAX_JSON = 1 << 20;

function readJSON(file) {
  const st = fs.statSync(file);
  if (!st.isFile() || st.size > MAX_JSON) throw new Error("not a small regular file");
  return JSON.parse(fs.readFileSync(file, "utf8"));
}

function main() {
  let manifest;
  try {
    manifest = readJSON(path.join(__dirname, "..", "digests.json"));
  } catch (e) {
    fail("the mcpseal package's digests.json cannot be read: reinstall mcpseal");
  }
  if (manifest.format !== "mcpseal-npm-digests/1" || typeof manifest.version !== "string" || typeof manifest.binaries !== "object" || manifest.binaries === null) {
    fail("the mcpseal package's digests.json is not in a format this launcher knows: reinstall mcpseal");
  }
  const key = `${process.platform}-${process.arch}`;
  const entry = Object.prototype.hasOwnProperty.call(manifest.binaries, key) ? manifest.binaries[key] : undefined;
  if (!entry) {
    fail(`mcpseal ${manifest.version} has no binary for ${key}`, "download a release archive, or build from source (go install ./cmd/mcpseal)");
  }
  let pkgFile;
  try {
    pkgFile = require.resolve(`${entry.package}/package.json`, { paths: [path.join(__dirname, "..")] });
  } catch (e) {
    fail(`${entry.package} is not installed`, "npm installs it as an optional dependency of mcpseal: do not install with --omit=optional or --no-optional");
  }
  let pkg;
  try {
    pkg = readJSON(pkgFile);
  } catch (e) {
    fail(`${entry.package}'s package.json cannot be read: reinstall mcpseal`);
  }
  if (pkg.name !== entry.package || pkg.version !== manifest.version) {
    fail(`${entry.package} is not version ${manifest.version} (the mcpseal package's version); refusing to run it`, "reinstall mcpseal so that both come from the same release");
  }
  const bin = path.join(path.dirname(pkgFile), entry.path);
  let data;
  try {
    const st = fs.statSync(bin);
    if (!st.isFile() || st.size > MAX_BINARY) throw new Error("not a regular file of a binary's size");
    data = fs.readFileSync(bin);
  } catch (e) {
    fail(`the mcpseal binary in ${entry.package} cannot be read`, "reinstall mcpseal");
  }
  const got = crypto.createHash("sha256").update(data).digest("hex");
  if (got !== entry.sha256) {
    fail(`the mcpseal binary in ${entry.package} does not match the SHA-256 recorded in mcpseal ${manifest.version} (sha256 ${got}, recorded ${entry.sha256}); refusing to run it`, "reinstall mcpseal from the registry; if it happens again, the package was tampered with");
  }
  const child = spawn(bin, process.argv.slice(2), { stdio: "inherit", windowsHide: true });
  const forward = ["SIGINT", "SIGTERM", "SIGHUP"];
  const handlers = {};
  for (const sig of forward) {
    handlers[sig] = () => { try { child.kill(sig); } catch (e) { /* already gone */ } };
    process.on(sig, handlers[sig]);
  }
  child.on("error", () => fail(`the mcpseal binary in ${entry.package} could not be started`, "reinstall mcpseal"));
  child.on("exit", (code, signal) => {
    for (const sig of forward) process.removeListener(sig, handlers[sig]);
    if (signal) {
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code === null ? 1 : code);
  });
}

main();
