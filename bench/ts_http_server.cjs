// The TypeScript SDK's Streamable HTTP server for bench/runtime_http.py: one `echo` tool.
//
// Stateful, one transport per session, on Node's own http server (keep-alive and TCP_NODELAY
// are Node's defaults). The SDK is loaded from the npm cache given as the first argument (the
// benchmark installs it there); `--json` turns on the SDK's JSON responses. Prints the
// endpoint URL once listening.
"use strict";

const http = require("node:http");
const path = require("node:path");
const { randomUUID } = require("node:crypto");
const { createRequire } = require("node:module");

const cache = process.argv[2];
const json = process.argv.includes("--json");
const load = createRequire(path.join(cache, "package.json"));
const { McpServer } = load("@modelcontextprotocol/sdk/server/mcp.js");
const { StreamableHTTPServerTransport } = load("@modelcontextprotocol/sdk/server/streamableHttp.js");
const { isInitializeRequest } = load("@modelcontextprotocol/sdk/types.js");
const z = load("zod");

function buildServer() {
  const server = new McpServer({ name: "bench-typescript-sdk", version: "0" });
  server.registerTool(
    "echo",
    { description: "Echo the text.", inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  return server;
}

const transports = new Map();

function refuse(res, status, message) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

const server = http.createServer(async (req, res) => {
  try {
    if (req.url !== "/mcp") return refuse(res, 404, "Not Found");
    const body = req.method === "POST" ? await readJson(req) : undefined;
    const sessionId = req.headers["mcp-session-id"];
    let transport = sessionId ? transports.get(sessionId) : undefined;
    if (transport === undefined) {
      if (sessionId || req.method !== "POST" || !isInitializeRequest(body)) {
        return refuse(res, sessionId ? 404 : 400, "no such session");
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: json,
        onsessioninitialized: (id) => transports.set(id, transport),
      });
      transport.onclose = () => transports.delete(transport.sessionId);
      await buildServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  } catch (error) {
    if (!res.headersSent) refuse(res, 500, String(error));
  }
});

server.listen(0, "127.0.0.1", () => {
  console.log(`http://127.0.0.1:${server.address().port}/mcp`);
});
