// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// MCP tool-call round trips over stdio: elsai-workbench --mcp-stdio against the reference
// @modelcontextprotocol/server-filesystem, both driven by the same SDK client in one run.
//   node bench/mcp_bench.mjs WORKBENCH [--calls N]
// Measures read_file of a 4 KiB file and list_dir (list_directory) of a 1,000-entry folder, the
// latter also with elsai's listing cache off (ELSAI_LIST_CACHE=0: every call reads the folder).
// Calls are timed one at a time (call → result) and the two servers alternate in blocks, so
// both see the same machine load; the figure is the median per call, printed as a ratio.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const clientDir = join(root, 'tests', 'mcp-client');
const require = createRequire(join(clientDir, 'package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const referenceServer = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');

const workbench = process.argv[2];
const callsArg = process.argv.indexOf('--calls');
const calls = callsArg > 0 ? Number(process.argv[callsArg + 1]) : 400;
if (!workbench) {
    console.error('usage: node bench/mcp_bench.mjs WORKBENCH [--calls N]');
    process.exit(2);
}

// The data: a 4 KiB text file and a folder of 1,000 small files.
const tmp = mkdtempSync(join(tmpdir(), 'elsai-mcp-bench-'));
const project = join(tmp, 'project');
mkdirSync(join(project, 'many'), { recursive: true });
writeFileSync(join(project, 'four-k.txt'), 'abcdefghijklmnopqrstuvwxyz012345678901234567890123456789012345\n'.repeat(64));
for (let i = 0; i < 1000; ++i) writeFileSync(join(project, 'many', `file-${String(i).padStart(4, '0')}.txt`), `${i}\n`);

async function connect(command, args, env = undefined) {
    const client = new Client({ name: 'mcp-bench', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command, args, env, stderr: 'ignore' }));
    return client;
}

const elsaiServer = (ws, env) => ({
    read: { name: 'read_file', arguments: { path: 'four-k.txt' } },
    list: { name: 'list_dir', arguments: { path: 'many' } },
    connect: () => connect(workbench, ['--headless', '--workspace-root', join(tmp, ws),
                                       '--seed-from', project, '--ttl', 'none',
                                       '--mcp-stdio', '--mcp-agent', 'bench=read_only'], env),
});
const elsai = { name: 'elsai', ...elsaiServer('ws') };
elsai.client = await elsai.connect();
// The same server with the listing cache off: what a folder changed since its last listing costs.
const elsaiNoCache = { name: 'elsai, listing cache off',
                       ...elsaiServer('ws-nocache', { ...process.env, ELSAI_LIST_CACHE: '0' }) };
elsaiNoCache.client = await elsaiNoCache.connect();
const reference = {
    name: 'server-filesystem',
    client: await connect(process.execPath, [referenceServer, project]),
    read: { name: 'read_text_file', arguments: { path: join(project, 'four-k.txt') } },
    list: { name: 'list_directory', arguments: { path: join(project, 'many') } },
};

async function timeCalls(server, call, n, into) {
    for (let i = 0; i < n; ++i) {
        const t0 = process.hrtime.bigint();
        const r = await server.client.callTool(call);
        into.push(Number(process.hrtime.bigint() - t0) / 1e6);
        if (r.isError) throw new Error(`${server.name} ${call.name}: ${JSON.stringify(r.content)}`);
    }
}

const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.floor(s.length / 2)];
};

// Sanity: both return the whole file and the whole folder.
for (const s of [elsai, elsaiNoCache, reference]) {
    const text = (await s.client.callTool(s.read)).content[0].text;
    if (!text.includes('abcdefghij') || text.length < 4000) throw new Error(`${s.name}: bad read`);
    const listing = (await s.client.callTool(s.list)).content[0].text;
    if (!listing.includes('file-0999.txt')) throw new Error(`${s.name}: bad listing`);
}

const results = {};
for (const kind of ['read', 'list', 'listNoCache']) {
    const n = kind === 'read' ? calls : Math.max(20, Math.floor(calls / 4));
    const ours = kind === 'listNoCache' ? elsaiNoCache : elsai;
    const call = kind === 'read' ? 'read' : 'list';
    const times = { elsai: [], reference: [] };
    await timeCalls(ours, ours[call], 20, []); // warm-up
    await timeCalls(reference, reference[call], 20, []);
    const block = 25;
    for (let done = 0; done < n; done += block) {
        await timeCalls(ours, ours[call], Math.min(block, n - done), times.elsai);
        await timeCalls(reference, reference[call], Math.min(block, n - done), times.reference);
    }
    results[kind] = { n, elsai: median(times.elsai), reference: median(times.reference) };
}

await elsai.client.close();
await elsaiNoCache.client.close();
await reference.client.close();
rmSync(tmp, { recursive: true, force: true });

const label = { read: 'read_file, 4 KiB file        ', list: 'list_dir, 1,000-entry folder ',
                listNoCache: 'list_dir, listing cache off  ' };
console.log('MCP tool call round trip over stdio, same SDK client, median per call');
console.log('what                          elsai       server-filesystem   ratio (target <= 0.5)');
for (const [kind, r] of Object.entries(results)) {
    const ratio = r.elsai / r.reference;
    console.log(`${label[kind]} ${r.elsai.toFixed(3).padStart(7)} ms  ${r.reference.toFixed(3).padStart(9)} ms` +
                `          ${ratio.toFixed(2)}  (${r.n} calls each)`);
}
