// A host of MCP Apps made of the extension's own reference code (@modelcontextprotocol/ext-apps):
// its AppBridge (the host side) in front of the official TypeScript client, and its App (the
// view side) linked to the bridge in memory, as a sandboxed iframe would be over postMessage.
// It runs against a server over stdio and prints what it saw as one JSON object.
//
//   node ui_host.mjs ERA COMMAND [ARG...]      ERA: handshake | stateless
//
// The script is copied next to node_modules of the npm folder that holds the packages, so that
// their names resolve.
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import {
  AppBridge,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
  isToolVisibilityAppOnly,
  McpUiResourceMetaSchema,
  McpUiToolMetaSchema,
} from "@modelcontextprotocol/ext-apps/app-bridge";
import { App } from "@modelcontextprotocol/ext-apps";
import { EXTENSION_ID } from "@modelcontextprotocol/ext-apps/server";

const [era, command, ...args] = process.argv.slice(2);
const options = era === "stateless" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {};
const extension = EXTENSION_ID;
const client = new Client(
  { name: "ui-host", version: "1.0.0" },
  { capabilities: { extensions: { [extension]: { mimeTypes: [RESOURCE_MIME_TYPE] } } }, ...options },
);
await client.connect(new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" }));

const report = { mimeType: RESOURCE_MIME_TYPE, extension, tools: {}, errors: [] };
report.serverCapabilities = client.getServerCapabilities();
for (const tool of (await client.listTools()).tools) {
  const meta = tool._meta?.ui;
  const parsed = meta === undefined ? null : McpUiToolMetaSchema.safeParse(meta);
  if (parsed && !parsed.success) report.errors.push(`${tool.name}: ${parsed.error.message}`);
  report.tools[tool.name] = {
    resourceUri: getToolUiResourceUri(tool) ?? null, // throws for a URI outside ui://
    appOnly: isToolVisibilityAppOnly(tool),
  };
}
report.resources = (await client.listResources()).resources;
const read = await client.readResource({ uri: "ui://weather/dashboard" });
report.contents = read.contents;
for (const item of read.contents) {
  const parsed = McpUiResourceMetaSchema.safeParse(item._meta?.ui ?? {});
  if (!parsed.success) report.errors.push(`contents: ${parsed.error.message}`);
}

// The view, through the bridge: its calls go to the server through the host's client.
const bridge = new AppBridge(client, { name: "ui-host", version: "1.0.0" }, { serverTools: {}, serverResources: {} });
const [viewSide, hostSide] = InMemoryTransport.createLinkedPair();
await bridge.connect(hostSide);
// No browser here: no ResizeObserver to report the size with.
const view = new App({ name: "weather-view", version: "1.0.0" }, {}, { autoResize: false });
await view.connect(viewSide);
report.viewCall = await view.callServerTool({ name: "refresh", arguments: { city: "Oslo" } });
report.viewRead = await view.readServerResource({ uri: "ui://weather/dashboard" });
await view.close();
await client.close();
process.stdout.write(JSON.stringify(report));
