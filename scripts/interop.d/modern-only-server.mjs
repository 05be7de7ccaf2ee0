// A modern-only MCP server (revision 2026-07-28) built with the official
// TypeScript SDK v2 (@modelcontextprotocol/server, pinned in package.json):
// `serveStdio(..., { legacy: 'reject' })` answers `initialize` with -32022
// naming only 2026-07-28, as such servers do. checks.py reaches it through
// the workbench's era bridge. Usage: node modern-only-server.mjs NODE_MODULES
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(join(process.argv[2], 'noop.js'));
const { McpServer, fromJsonSchema } = require('@modelcontextprotocol/server');
const { serveStdio } = require('@modelcontextprotocol/server/stdio');

// Calls ended by the client's notifications/cancelled, for the `aborted` tool.
let aborted = 0;

serveStdio(() => {
    const server = new McpServer({ name: 'modern-only', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.registerTool('echo', {
        description: 'Echoes the text back',
        inputSchema: fromJsonSchema({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] })
    }, async ({ text }) => ({ content: [{ type: 'text', text: `modern echo: ${text}` }] }));
    server.registerTool('add', {
        description: 'Adds two numbers',
        inputSchema: fromJsonSchema({ type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] }),
        outputSchema: fromJsonSchema({ type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] })
    }, async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }], structuredContent: { sum: a + b } }));
    server.registerTool('count', {
        description: 'Counts to n, reporting progress at each step',
        inputSchema: fromJsonSchema({ type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] })
    }, async ({ n }, ctx) => {
        const token = ctx.mcpReq._meta?.progressToken;
        for (let i = 1; i <= n; i++) {
            await new Promise(resolve => setTimeout(resolve, 50));
            if (token !== undefined) {
                await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: n } });
            }
        }
        return { content: [{ type: 'text', text: `counted to ${n}` }] };
    });
    server.registerTool('wait', {
        description: 'Waits until cancelled (at most 60 s)',
        inputSchema: fromJsonSchema({ type: 'object', properties: {} })
    }, async (_args, ctx) => {
        await new Promise(resolve => {
            const timer = setTimeout(resolve, 60000);
            ctx.mcpReq.signal.addEventListener('abort', () => { aborted++; clearTimeout(timer); resolve(); });
        });
        return { content: [{ type: 'text', text: 'waited' }] };
    });
    server.registerTool('aborted', {
        description: 'How many calls were cancelled',
        inputSchema: fromJsonSchema({ type: 'object', properties: {} })
    }, async () => ({ content: [{ type: 'text', text: `aborted: ${aborted}` }] }));
    return server;
}, { legacy: 'reject' });
