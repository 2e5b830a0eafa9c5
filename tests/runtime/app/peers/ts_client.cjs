// A TypeScript SDK client for the app-layer interop tests: runs one session against the app
// example and prints what it saw as one JSON object on stdout (the Python test checks it).
//
//   node ts_client.cjs SDK ROOT stdio COMMAND [ARG...]     (the example as a subprocess)
//   node ts_client.cjs SDK ROOT http URL                    (Streamable HTTP)
//
// SDK is `v1` (`@modelcontextprotocol/sdk`, handshake era: it proposes 2025-11-25) or `v2`
// (`@modelcontextprotocol/client`, pinned to the stateless 2026-07-28 era by its
// `versionNegotiation`); ROOT is the npm folder holding it. `MCP_PROPOSE=2025-03-26` makes the v1
// client propose that revision in `initialize` (v1 accepts it but never proposes it itself).
"use strict";

const path = require("node:path");
const { createRequire } = require("node:module");

const [sdk, root, transportKind, ...target] = process.argv.slice(2);
const load = createRequire(path.join(root, "package.json"));

function modules() {
  if (sdk === "v1") {
    return {
      Client: load("@modelcontextprotocol/sdk/client/index.js").Client,
      Stdio: load("@modelcontextprotocol/sdk/client/stdio.js").StdioClientTransport,
      Http: load("@modelcontextprotocol/sdk/client/streamableHttp.js").StreamableHTTPClientTransport,
      options: {},
    };
  }
  const client = load("@modelcontextprotocol/client");
  return {
    Client: client.Client,
    Stdio: load("@modelcontextprotocol/client/stdio").StdioClientTransport,
    Http: client.StreamableHTTPClientTransport,
    options: { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  };
}

function proposing(transport, version) {
  // Rewrite the proposal of the outgoing initialize request; everything else is the SDK's own.
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (message.method === "initialize") {
      message = { ...message, params: { ...message.params, protocolVersion: version } };
    }
    return send(message, options);
  };
  return transport;
}

function recordingVersion(transport, seen) {
  // v1 tells the transport the negotiated revision (HTTP sends it as a header); record it.
  const set = transport.setProtocolVersion ? transport.setProtocolVersion.bind(transport) : null;
  transport.setProtocolVersion = (version) => {
    seen.version = version;
    if (set) set(version);
  };
  return transport;
}

async function main() {
  const { Client, Stdio, Http, options } = modules();
  let transport =
    transportKind === "stdio"
      ? new Stdio({ command: target[0], args: target.slice(1), stderr: "ignore" })
      : new Http(new URL(target[0]));
  if (process.env.MCP_PROPOSE) transport = proposing(transport, process.env.MCP_PROPOSE);
  const seen = {};
  if (sdk === "v1") transport = recordingVersion(transport, seen);
  const client = new Client({ name: `ts-${sdk}-interop`, version: "0" }, options);
  await client.connect(transport);
  const progress = [];
  const report = {
    protocolVersion: sdk === "v1" ? seen.version : client.getNegotiatedProtocolVersion(),
    tools: (await client.listTools()).tools,
    echo: await client.callTool({ name: "echo", arguments: { text: "hi there" } }),
    weather: await client.callTool({ name: "weather", arguments: { city: "Oslo" } }),
  };
  const onprogress = (p) => progress.push(p);
  report.count =
    sdk === "v1"
      ? await client.callTool({ name: "count", arguments: { steps: 3 } }, undefined, { onprogress })
      : await client.callTool({ name: "count", arguments: { steps: 3 } }, { onprogress });
  report.progress = progress;
  report.resources = (await client.listResources()).resources;
  report.config = await client.readResource({ uri: "config://app" });
  report.prompts = (await client.listPrompts()).prompts;
  report.greet = await client.getPrompt({ name: "greet", arguments: { name: "Ada" } });
  report.bad = await client.callTool({ name: "echo", arguments: { text: 5 } });
  await client.close();
  process.stdout.write(JSON.stringify(report));
}

main().catch((error) => {
  process.stderr.write(`${error && error.stack ? error.stack : error}\n`);
  process.exit(1);
});
