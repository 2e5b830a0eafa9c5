// The TypeScript SDK's stdio server for bench/runtime_stdio.py: one `echo` tool, written as the
// SDK's README shows (McpServer, registerTool with a zod input schema, StdioServerTransport).
//
// The SDK is loaded from the npm cache given as the first argument (where the benchmark and the
// interop tests install it).
"use strict";

const path = require("node:path");
const { createRequire } = require("node:module");

const load = createRequire(path.join(process.argv[2], "package.json"));
const { McpServer } = load("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = load("@modelcontextprotocol/sdk/server/stdio.js");
const z = load("zod");

const server = new McpServer({ name: "bench-typescript-sdk", version: "0" });
server.registerTool(
  "echo",
  { description: "Return the text it is given.", inputSchema: { text: z.string() } },
  async ({ text }) => ({ content: [{ type: "text", text }] }),
);
server.connect(new StdioServerTransport());
