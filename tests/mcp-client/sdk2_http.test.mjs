// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The TypeScript SDK's 2.x client packages (@modelcontextprotocol/client, and the Tasks
// extension's client @modelcontextprotocol/ext-tasks) against elsai-workbench over Streamable
// HTTP: the stateless revision 2026-07-28 and, on the same endpoint, the session-based one.
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';

import { makeProject, startHttpServer, until } from './lib/server.mjs';
import { READ_ONLY_TOOLS } from './lib/tools.mjs';

const MODERN = '2026-07-28';
let p;
let server;

/** era: 'modern' (pinned to 2026-07-28), 'auto' (probe with server/discover), 'legacy' (the default). */
async function connect(token, { era = 'modern', name = 'sdk2-test', capabilities = {} } = {}) {
    const options = { capabilities };
    if (era === 'modern') options.versionNegotiation = { mode: { pin: MODERN } };
    if (era === 'auto') options.versionNegotiation = { mode: 'auto' };
    const client = new Client({ name, version: '2.0.0' }, options);
    const transport = new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    await client.connect(transport);
    return { client, transport };
}

function text(result) {
    return result.content.map((c) => c.text).join('');
}

const meta = (capabilities = {}) => ({
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': capabilities,
});

/** A raw POST (status codes the SDK turns into exceptions); the body is parsed when JSON. */
function rawPost(headers, body, extraOptions = {}) {
    return new Promise((resolve, reject) => {
        const req = request(server.url, { method: 'POST', headers: {
            'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
            ...headers }, ...extraOptions }, (res) => {
            let data = '';
            res.on('data', (d) => { data += d; });
            res.on('end', () => {
                let json;
                try { json = JSON.parse(data); } catch { json = undefined; }
                resolve({ status: res.statusCode, headers: res.headers, body: data, json });
            });
        });
        req.on('error', reject);
        req.end(body);
    });
}

function modernHeaders(token, method, name) {
    const h = { Authorization: `Bearer ${token}`, 'MCP-Protocol-Version': MODERN, 'Mcp-Method': method };
    if (name !== undefined) h['Mcp-Name'] = name;
    return h;
}

describe('Streamable HTTP with the SDK 2.x client', () => {
    before(async () => {
        p = makeProject({ 'README.md': '# demo\n', 'docs/notes.txt': 'one\ntwo\nthree\n' });
        // Progress every 0.3 s, which is also when a call becomes a task: a 4 s command
        // outlives a 1.5 s request timeout (scaled down from the SDK's 60 s default).
        server = await startHttpServer(p, ['coder=read_write', 'reviewer=read_only'],
                                       ['--mcp-progress-interval', '0.3']);
    });
    after(async () => {
        assert.equal(await server.stop(), 143); // 128 + SIGTERM
        p.remove();
    });

    test('auto negotiation picks the stateless revision: no initialize, no session', async () => {
        const { client, transport } = await connect(server.agents.reviewer.token, { era: 'auto' });
        assert.equal(client.getProtocolEra(), 'modern');
        assert.equal(transport.sessionId, undefined);
        const tools = (await client.listTools()).tools.map((t) => t.name).sort();
        assert.deepEqual(tools, READ_ONLY_TOOLS);
        const r = await client.callTool({ name: 'read_file', arguments: { path: 'docs/notes.txt' } });
        assert.equal(text(r), 'one\ntwo\nthree\n');
        const discover = await client.discover();
        assert.equal(discover.supportedVersions[0], MODERN);
        assert.ok(discover.capabilities.extensions['io.modelcontextprotocol/tasks']);
        await client.close();
    });

    test('the default (legacy) mode still gets a session on the same endpoint', async () => {
        const { client, transport } = await connect(server.agents.reviewer.token, { era: 'legacy' });
        assert.equal(client.getProtocolEra(), 'legacy');
        assert.ok(transport.sessionId, 'a legacy session has an id');
        const r = await client.callTool({ name: 'read_file', arguments: { path: 'README.md' } });
        assert.equal(text(r), '# demo\n');
        await transport.terminateSession();
        await client.close();
    });

    test('a command longer than the request timeout completes through progress resets', async () => {
        const { client } = await connect(server.agents.coder.token);
        const command = 'for i in 1 2 3 4; do echo "line $i"; sleep 1; done';
        const progress = [];
        const r = await client.callTool({ name: 'execute', arguments: { command } }, {
            timeout: 1500, resetTimeoutOnProgress: true, onprogress: (n) => progress.push(n) });
        assert.equal(text(r), 'line 1\nline 2\nline 3\nline 4\n[exit code: 0]');
        assert.ok(progress.length >= 3, `only ${progress.length} progress notifications`);
        // Without the reset it times out: the test measures what it claims.
        await assert.rejects(client.callTool({ name: 'execute', arguments: { command: 'sleep 4' } },
                                             { timeout: 1500 }), /timed out|timeout/i);
        await client.close();
    });

    test('a command longer than the request timeout completes as a task (Tasks extension)', async () => {
        const { client } = await connect(server.agents.coder.token, { name: 'sdk2-tasks' });
        let requests = 0;
        // The requests of the task flow, each bounded by the scaled-down 1.5 s timeout: only a
        // task can bring back a 4 s command's output.
        const rawDispatch = async (message, options = {}) => {
            const id = `t${++requests}`;
            const name = message.method === 'tools/call' ? message.params.name : message.params?.taskId;
            const signals = [AbortSignal.timeout(1500), options.signal].filter(Boolean);
            const res = await fetch(server.url, {
                method: 'POST', signal: AbortSignal.any(signals),
                headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
                           ...modernHeaders(server.agents.coder.token, message.method, name) },
                body: JSON.stringify({ jsonrpc: '2.0', id, ...message }),
            });
            const body = await res.json();
            assert.equal(body.id, id);
            return body.error ? { kind: 'error', error: body.error } : { kind: 'result', result: body.result };
        };
        const session = createTaskSessionFromClient(client, {
            endpointId: 'elsai-coder',
            rawDispatch,
            v2RequestFraming: { protocolVersion: MODERN, clientInfo: { name: 'sdk2-tasks', version: '2.0.0' },
                                clientCapabilities: {} },
        });
        try {
            const execution = await session.callTool('execute', {
                command: 'for i in 1 2 3 4; do echo "line $i"; sleep 1; done' });
            assert.equal(execution.kind, 'task', 'the server answered with a task');
            assert.match(execution.handle.taskId, /^[0-9a-f]{32}$/);
            const { outcome } = await execution.settle();
            const result = resultFromTaskOutcome(outcome);
            assert.equal(text(result), 'line 1\nline 2\nline 3\nline 4\n[exit code: 0]');
            assert.equal(result.structuredContent.exit_code, 0);
            assert.ok(requests >= 3, `${requests} requests: the call, polls, the result`);
            // A quick command is answered directly, not as a task. A loaded machine (the
            // sanitizer stage) may take longer than the 0.3 s threshold to start a shell: a
            // few tries, each task settled before the next.
            let quick;
            for (let i = 0; i < 5 && quick?.kind !== 'immediate'; ++i) {
                quick = await session.callTool('execute', { command: 'echo quick' });
                if (quick.kind === 'task') await quick.settle();
            }
            assert.equal(quick.kind, 'immediate');
        } finally {
            await session.close();
        }
        await client.close();
    });

    test('tasks/cancel stops a task', async () => {
        const token = server.agents.coder.token;
        const created = await rawPost(modernHeaders(token, 'tools/call', 'execute'), JSON.stringify({
            jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'execute',
                arguments: { command: 'sleep 300' },
                _meta: meta({ extensions: { 'io.modelcontextprotocol/tasks': {} } }) } }));
        assert.equal(created.status, 200);
        assert.equal(created.json.result.resultType, 'task');
        const taskId = created.json.result.taskId;
        // The task methods need the extension declared on each request (-32021 without it).
        const call = (method, caps = { extensions: { 'io.modelcontextprotocol/tasks': {} } }) =>
            rawPost(modernHeaders(token, method, taskId), JSON.stringify({
                jsonrpc: '2.0', id: 2, method, params: { taskId, _meta: meta(caps) } }));
        const undeclared = await call('tasks/cancel', {});
        assert.equal(undeclared.status, 400);
        assert.equal(undeclared.json.error.code, -32021);
        assert.equal((await call('tasks/cancel')).json.result.resultType, 'complete');
        let status;
        for (let i = 0; i < 200 && status !== 'cancelled'; ++i) {
            status = (await call('tasks/get')).json.result.status;
            if (status !== 'cancelled') await new Promise((r) => setTimeout(r, 50));
        }
        assert.equal(status, 'cancelled');
    });

    test('300 sessions opened and never closed do not lock out a new agent', async () => {
        // SDK 2.x in its default (session) mode, closing nothing: close() sends no DELETE.
        const leaked = [];
        for (let i = 0; i < 300; ++i) {
            const { client } = await connect(server.agents.coder.token, { era: 'legacy', name: `leak-${i}` });
            leaked.push(client);
        }
        const { client } = await connect(server.agents.reviewer.token, { era: 'legacy', name: 'newcomer' });
        const r = await client.callTool({ name: 'read_file', arguments: { path: 'README.md' } });
        assert.equal(text(r), '# demo\n');
        // The leaking agent itself can go on too (its least recently used sessions made room).
        const again = await connect(server.agents.coder.token, { era: 'legacy', name: 'leak-again' });
        assert.equal(text(await again.client.callTool({ name: 'read_file', arguments: { path: 'README.md' } })),
                     '# demo\n');
        // The most recent leaked session still works; the oldest was evicted.
        assert.equal(text(await leaked.at(-1).callTool({ name: 'read_file', arguments: { path: 'README.md' } })),
                     '# demo\n');
        await assert.rejects(leaked[0].callTool({ name: 'read_file', arguments: { path: 'README.md' } }));
        for (const c of [...leaked, client, again.client]) await c.close().catch(() => {});
    });

    test("64 long commands from one agent leave another's read_file unqueued", async () => {
        const writer = await connect(server.agents.coder.token, { name: 'busy' });
        const reader = await connect(server.agents.reviewer.token, { name: 'reader' });
        const finished = [];
        const calls = Array.from({ length: 64 }, (_, i) => writer.client.callTool({ name: 'execute', arguments: {
            command: 'mkdir -p started && touch started/$$; while [ ! -f fair-go ]; do sleep 0.05; done; echo released' } },
            { timeout: 120000 }).then((r) => { finished.push(i); return r; }));
        // Ordering, not time: the writer holds its whole share of workers (48 of 64; the rest
        // of its calls queue), and the 64 wait for a file written only after the read came back.
        await until(() => { try { return readdirSync(join(p.workspace, 'started')).length >= 48; } catch { return false; } },
                    'the writer to hold 48 workers', 60000);
        const r = await reader.client.callTool({ name: 'read_file', arguments: { path: 'docs/notes.txt' } });
        assert.equal(text(r), 'one\ntwo\nthree\n');
        assert.equal(finished.length, 0, 'no writer call could have finished before the read');
        // The writer's own calls all wait behind its share: the release comes from outside.
        writeFileSync(join(p.workspace, 'fair-go'), '');
        for (const c of await Promise.all(calls)) assert.match(text(c), /^released\n/);
        await writer.client.close();
        await reader.client.close();
    });

    test("unknown versions, oversized bodies and unknown arguments get the spec's answers", async () => {
        const token = server.agents.reviewer.token;
        // An unknown version: 400 with UnsupportedProtocolVersionError naming what is supported.
        const unknown = await rawPost({ ...modernHeaders(token, 'server/discover'), 'MCP-Protocol-Version': '2099-01-01' },
            JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'server/discover', params: { _meta: {
                ...meta(), 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } } }));
        assert.equal(unknown.status, 400);
        assert.equal(unknown.json.id, 7);
        assert.equal(unknown.json.error.code, -32022);
        assert.equal(unknown.json.error.data.requested, '2099-01-01');
        assert.ok(unknown.json.error.data.supported.includes(MODERN));
        assert.ok(unknown.json.error.data.supported.includes('2025-11-25'));
        // A client pinned to a version the server lacks fails loudly.
        const pinned = new Client({ name: 'pinned', version: '1' }, { versionNegotiation: { mode: { pin: '2099-01-01' } } });
        await assert.rejects(pinned.connect(new StreamableHTTPClientTransport(new URL(server.url), {
            requestInit: { headers: { Authorization: `Bearer ${token}` } } })));
        // initialize never echoes an unknown version.
        const init = await rawPost({ Authorization: `Bearer ${token}` }, JSON.stringify({ jsonrpc: '2.0', id: 1,
            method: 'initialize', params: { protocolVersion: '2099-01-01', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }));
        assert.equal(init.json.result.protocolVersion, '2025-11-25');
        // A body over the 64 MiB cap: 413 from the headers alone.
        const big = await new Promise((resolve, reject) => {
            const req = request(server.url, { method: 'POST', headers: {
                ...modernHeaders(token, 'tools/call', 'write_file'), 'Content-Type': 'application/json',
                'Content-Length': String(200 * 1024 * 1024) } }, (res) => {
                let data = '';
                res.on('data', (d) => { data += d; });
                res.on('end', () => resolve({ status: res.statusCode, body: data }));
            });
            req.on('error', reject);
            req.write('{"jsonrpc":"2.0",');
        });
        assert.equal(big.status, 413);
        // Unknown arguments: a tool error naming them, through the SDK.
        const { client } = await connect(token);
        const r = await client.callTool({ name: 'read_file', arguments: { path: 'README.md', lines: 2 } });
        assert.equal(r.isError, true);
        assert.match(text(r), /unknown argument 'lines'/);
        await client.close();
    });

    test('no OAuth discovery is advertised for the static bearer tokens', async () => {
        const wrong = await rawPost({ Authorization: 'Bearer wrong-token-0123456789' }, '{}');
        assert.equal(wrong.status, 401);
        assert.doesNotMatch(wrong.headers['www-authenticate'], /resource_metadata/);
        for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp',
                            '/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
            const res = await fetch(new URL(path, server.url));
            assert.equal(res.status, 404, path);
        }
    });
});

// Clients with neither progress resets nor Tasks (SDK defaults, Codex's tool timeout): a
// command still running at --execute-soft-return answers before the client's request timeout,
// with its output so far and a process_id the background-process tools wait on and stop.
// Scaled down: a 1 s soft return under a 4 s client timeout (the SDK's is 60 s, ours 45 s).
describe('the soft return with default client settings (SDK 2.x)', () => {
    before(async () => {
        p = makeProject({ 'README.md': '# demo\n' });
        server = await startHttpServer(p, ['coder=read_write'], ['--execute-soft-return', '1']);
    });
    after(async () => {
        assert.equal(await server.stop(), 143);
        p.remove();
    });

    for (const era of ['legacy', 'modern']) {
        test(`a long command returns while it runs, then finishes as a background process (${era})`, async () => {
            const { client } = await connect(server.agents.coder.token, { era });
            const r = await client.callTool({ name: 'execute', arguments: {
                command: 'echo first; sleep 3; echo second' } }, { timeout: 4000 });
            assert.equal(r.isError, false, text(r));
            assert.match(text(r), /^first\n/);
            assert.match(text(r), /still running/i);
            assert.equal(r.structuredContent.running, true);
            const id = r.structuredContent.process_id;
            assert.match(id, /^p\d+$/);
            // The rest of its output, waited for with the background-process tools.
            let out = '';
            let running = true;
            for (let i = 0; i < 20 && running; ++i) {
                const o = await client.callTool({ name: 'process_output', arguments: {
                    process_id: id, offset: 0, wait: 2 } }, { timeout: 4000 });
                assert.equal(o.isError, false, text(o));
                out = text(o); // the output, then a status line
                running = o.structuredContent.running;
            }
            assert.equal(running, false);
            assert.match(out, /^first\nsecond\n\[ended, exit code 0/);
            // A second one is stopped instead.
            const s = await client.callTool({ name: 'execute', arguments: {
                command: 'echo begun; sleep 300' } }, { timeout: 4000 });
            const stopped = await client.callTool({ name: 'process_stop', arguments: {
                process_id: s.structuredContent.process_id } }, { timeout: 4000 });
            assert.equal(stopped.isError, false, text(stopped));
            await client.close();
        });
    }
});
