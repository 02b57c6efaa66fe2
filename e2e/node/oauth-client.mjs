#!/usr/bin/env node
// oauth-client.mjs: the TypeScript SDK's Streamable HTTP client with the
// SDK's own OAuth client support, for mcpseal's team gateway tests.
//
//   node oauth-client.mjs --url URL --client-id ID [--call NAME] [--args JSON] [--calls N]
//
// It connects to URL; the gateway's 401 sends the SDK through its OAuth
// flow (protected resource metadata, authorization server metadata,
// authorization code with PKCE and the resource parameter). The "browser"
// is this script: it opens the authorization URL, which the test
// authorization server approves at once, and takes the code off the
// redirect. Then it lists the tools, calls --call N times, and prints one
// JSON line:
//
//   {"ok":true,"tools":["echo",...],"calls":[{"isError":false,"text":"..."},{"error":{"code":-32005,...}}]}
//
// On any other error: {"ok":false,"stage":"...","error":{...}}, exit 1.
// Trust for the TLS servers comes from NODE_EXTRA_CA_CERTS.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

function usage(msg) {
  process.stderr.write(`oauth-client.mjs: ${msg}\n`);
  process.exit(2);
}

const opts = { url: null, clientId: null, call: null, args: {}, calls: 1 };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  switch (argv[i]) {
    case "--url": opts.url = argv[++i]; break;
    case "--client-id": opts.clientId = argv[++i]; break;
    case "--call": opts.call = argv[++i]; break;
    case "--args":
      try { opts.args = JSON.parse(argv[++i]); } catch { usage("--args must be JSON"); }
      break;
    case "--calls": opts.calls = Number(argv[++i]); break;
    default: usage(`unknown flag ${argv[i]}`);
  }
}
if (!opts.url || !opts.clientId) usage("--url and --client-id are required");

const REDIRECT = "http://127.0.0.1:1/callback";

// A pre-registered public client that keeps everything in memory.
class Provider {
  constructor(clientId) { this.clientId = clientId; this.code = null; }
  get redirectUrl() { return REDIRECT; }
  get clientMetadata() {
    return { client_name: "mcpseal-e2e", redirect_uris: [REDIRECT], grant_types: ["authorization_code"], response_types: ["code"], token_endpoint_auth_method: "none" };
  }
  clientInformation() { return { client_id: this.clientId }; }
  tokens() { return this._tokens; }
  saveTokens(t) { this._tokens = t; }
  saveCodeVerifier(v) { this._verifier = v; }
  codeVerifier() { return this._verifier; }
  async redirectToAuthorization(url) {
    const res = await fetch(url, { redirect: "manual" });
    const loc = res.headers.get("location");
    if (!loc) throw new Error(`the authorization server answered ${res.status} without a redirect`);
    this.code = new URL(loc).searchParams.get("code");
  }
}

const summary = { ok: true };
let stage = "connect";
function fail(err) {
  process.stdout.write(JSON.stringify({ ok: false, stage, error: { code: err?.code ?? null, message: String(err?.message ?? err), data: err?.data ?? null } }) + "\n");
  process.exit(1);
}

try {
  const provider = new Provider(opts.clientId);
  const client = new Client({ name: "mcpseal-e2e-oauth", version: "1.0.0" }, { capabilities: {} });
  let transport = new StreamableHTTPClientTransport(new URL(opts.url), { authProvider: provider });
  try {
    await client.connect(transport);
  } catch (err) {
    if (!(err instanceof UnauthorizedError) || !provider.code) throw err;
    stage = "token";
    await transport.finishAuth(provider.code);
    stage = "connect";
    transport = new StreamableHTTPClientTransport(new URL(opts.url), { authProvider: provider });
    await client.connect(transport);
  }
  stage = "tools";
  const res = await client.listTools();
  summary.tools = res.tools.map((t) => t.name).sort();
  if (opts.call) {
    stage = "call";
    summary.calls = [];
    for (let i = 0; i < opts.calls; i++) {
      try {
        const r = await client.callTool({ name: opts.call, arguments: opts.args });
        const text = (r.content ?? []).find((c) => c.type === "text")?.text ?? null;
        summary.calls.push({ isError: !!r.isError, text });
      } catch (err) {
        summary.calls.push({ error: { code: err?.code ?? null, message: String(err?.message ?? err), data: err?.data ?? null } });
      }
    }
  }
  await client.close();
} catch (err) {
  fail(err);
}
process.stdout.write(JSON.stringify(summary) + "\n");
