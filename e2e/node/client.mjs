#!/usr/bin/env node
// client.mjs: a TypeScript SDK MCP client for mcpseal's end-to-end tests.
//
//   node client.mjs [--roots] [--sampling] [--elicitation] [--call NAME]
//                   [--args JSON] [--timeout MS] -- COMMAND [ARGS...]
//
// It spawns COMMAND with the SDK's StdioClientTransport (passing this
// process's environment through), declares the capabilities named by the
// flags, connects, lists every page of tools, prompts, resources and
// resource templates as the server's capabilities allow, calls one tool
// when --call is given, and prints one JSON summary line on stdout:
//
//   {"ok":true,"server":{...},
//    "instructions":true,"tools":["echo",...],"prompts":[...],
//    "resources":[...],"resourceTemplates":[...],"call":{"isError":false,"text":"..."}}
//
// On any error it prints {"ok":false,"error":{"code":N,"message":"...","data":...},
// "stage":"connect|tools|..."} and exits 1. Usage errors exit 2.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const MAX_PAGES = 100; // an honest reference server needs one or two

function usage(msg) {
  process.stderr.write(`client.mjs: ${msg}\n`);
  process.stderr.write("usage: node client.mjs [--roots] [--sampling] [--elicitation] [--call NAME] [--args JSON] [--timeout MS] -- COMMAND [ARGS...]\n");
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { caps: {}, call: null, args: {}, timeout: 20000, command: null, commandArgs: [] };
  let i = 0;
  for (; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") { i++; break; }
    switch (a) {
      case "--roots": opts.caps.roots = { listChanged: true }; break;
      case "--sampling": opts.caps.sampling = {}; break;
      case "--elicitation": opts.caps.elicitation = {}; break;
      case "--call": opts.call = argv[++i]; break;
      case "--args":
        try { opts.args = JSON.parse(argv[++i]); } catch { usage("--args must be JSON"); }
        break;
      case "--timeout": opts.timeout = Number(argv[++i]); break;
      default: usage(`unknown flag ${a}`);
    }
  }
  if (i >= argv.length) usage("missing COMMAND after --");
  opts.command = argv[i];
  opts.commandArgs = argv.slice(i + 1);
  return opts;
}

async function listAll(fn, key, timeout) {
  const items = [];
  let cursor;
  for (let page = 0; page < MAX_PAGES; page++) {
    const res = await fn(cursor ? { cursor } : {}, { timeout });
    items.push(...(res[key] ?? []));
    if (!res.nextCursor) return items;
    cursor = res.nextCursor;
  }
  throw new Error(`${key}: more than ${MAX_PAGES} pages`);
}

const opts = parseArgs(process.argv.slice(2));
const client = new Client({ name: "mcpseal-e2e", version: "1.0.0" }, { capabilities: opts.caps });
if (opts.caps.roots) {
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [] }));
}
const transport = new StdioClientTransport({
  command: opts.command,
  args: opts.commandArgs,
  env: { ...process.env },
  stderr: "inherit",
});

const summary = { ok: true };
let stage = "connect";
try {
  await client.connect(transport, { timeout: opts.timeout });
  const caps = client.getServerCapabilities() ?? {};
  summary.server = client.getServerVersion() ?? null;
  summary.instructions = typeof client.getInstructions() === "string";
  const t = opts.timeout;
  if (caps.tools) {
    stage = "tools";
    summary.tools = (await listAll((p, o) => client.listTools(p, o), "tools", t)).map((x) => x.name);
  }
  if (caps.prompts) {
    stage = "prompts";
    summary.prompts = (await listAll((p, o) => client.listPrompts(p, o), "prompts", t)).map((x) => x.name);
  }
  if (caps.resources) {
    stage = "resources";
    summary.resources = (await listAll((p, o) => client.listResources(p, o), "resources", t)).map((x) => x.uri);
    stage = "resourceTemplates";
    summary.resourceTemplates = (await listAll((p, o) => client.listResourceTemplates(p, o), "resourceTemplates", t)).map((x) => x.uriTemplate);
  }
  if (opts.call) {
    stage = "call";
    const res = await client.callTool({ name: opts.call, arguments: opts.args }, undefined, { timeout: t });
    const text = (res.content ?? []).find((c) => c.type === "text");
    summary.call = { isError: res.isError === true, text: text ? text.text : null };
  }
  stage = "close";
  await client.close();
  process.stdout.write(JSON.stringify(summary) + "\n");
  process.exit(0);
} catch (err) {
  const out = {
    ok: false,
    stage,
    error: { code: err?.code ?? null, message: String(err?.message ?? err), data: err?.data ?? null },
  };
  process.stdout.write(JSON.stringify(out) + "\n");
  try { await client.close(); } catch { /* already closed */ }
  process.exit(1);
}
