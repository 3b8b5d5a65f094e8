// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The official TypeScript SDK against elsai-workbench over Streamable HTTP.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { alive, auditRecords, makeProject, startHttpServer, treeHash, until } from './lib/server.mjs';
import { MUTATING_TOOLS, READ_ONLY_TOOLS, READ_WRITE_TOOLS } from './lib/tools.mjs';

let p;
let server;

async function connect(token, name = 'sdk-test') {
    const client = new Client({ name, version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    await client.connect(transport);
    return { client, transport };
}

function text(result) {
    return result.content.map((c) => c.text).join('');
}

/** A raw POST, to see status codes the SDK turns into exceptions. */
function rawPost(headers, body) {
    return new Promise((resolve, reject) => {
        const req = request(server.url, { method: 'POST', headers: {
            'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
            ...headers } }, (res) => {
            let data = '';
            res.on('data', (d) => { data += d; });
            res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
        });
        req.on('error', reject);
        req.end(body);
    });
}

const initBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {
    protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });

describe('Streamable HTTP with the SDK client', () => {
    before(async () => {
        p = makeProject({ 'README.md': '# demo\n', 'src/app.py': 'print("hi")\n',
                          'docs/notes.txt': 'one\ntwo\nthree\n' });
        // Progress every 0.3 s, so a 4 s command outlives a 1.5 s request timeout (scaled down
        // from the SDK's 60 s default and the 5 s default interval).
        server = await startHttpServer(p, ['coder=read_write', 'reviewer=read_only'],
                                       ['--mcp-progress-interval', '0.3']);
    });
    after(async () => {
        assert.equal(await server.stop(), 143); // 128 + SIGTERM
        p.remove();
    });

    test('start-up lines name each agent with its mode, url and a random token', () => {
        const { coder, reviewer } = server.agents;
        assert.equal(coder.mode, 'read_write');
        assert.equal(reviewer.mode, 'read_only');
        assert.match(coder.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
        assert.ok(Buffer.from(coder.token, 'base64url').length * 8 >= 128);
        assert.notEqual(coder.token, reviewer.token);
    });

    test('a read-only token sees only read_file and list_dir and cannot change the workspace', async () => {
        const { client } = await connect(server.agents.reviewer.token, 'reviewer-client');
        const tools = (await client.listTools()).tools.map((t) => t.name).sort();
        assert.deepEqual(tools, READ_ONLY_TOOLS);
        for (const t of (await client.listTools()).tools) {
            assert.equal(t.inputSchema.type, 'object');
            assert.ok(t.description.length > 20);
            assert.ok(t.title && t.title !== t.name, `${t.name} has no title`);
            // The SDK validates every structuredContent of these tools against it.
            assert.equal(t.outputSchema.type, 'object');
        }
        const before = treeHash(p.workspace);
        const attempts = [
            ['write_file', { path: 'README.md', content: 'pwned' }],
            ['write_file', { path: 'new.txt', content: 'x' }],
            ['execute', { command: 'echo pwned > README.md; touch evil' }],
            ['read_file', { path: '../outside.txt' }],
            ['list_dir', { path: '/etc' }],
            ['retrieve_offloaded_content', { handle: 'x' }],
            ['edit_file', { path: 'README.md', old_string: 'a', new_string: 'pwned' }],
            ['move', { source: 'README.md', destination: 'gone.md' }],
            ['delete', { path: 'README.md' }],
            ['mkdir', { path: 'evil' }],
            ['process_start', { command: 'touch evil' }],
        ];
        // Every mutating tool is tried above.
        const tried = new Set(attempts.map(([name]) => name));
        for (const name of MUTATING_TOOLS.filter((t) => !t.startsWith('process_') || t === 'process_start'))
            assert.ok(tried.has(name), `${name} is not tried`);
        for (const [name, args] of attempts) {
            let failed = false;
            try {
                const r = await client.callTool({ name, arguments: args });
                failed = r.isError === true;
                if (failed) assert.match(text(r), /^[A-Za-z]+Error: /);
            } catch {
                failed = true; // a protocol error (unknown tool)
            }
            assert.ok(failed, `${name} must fail for a read-only agent`);
        }
        const ok = await client.callTool({ name: 'read_file', arguments: { path: 'docs/notes.txt', offset: 1, limit: 1 } });
        assert.equal(ok.isError, false);
        assert.equal(text(ok), 'two\n');
        const listing = await client.callTool({ name: 'list_dir', arguments: { path: '.' } });
        assert.match(text(listing), /README\.md/);
        assert.equal(treeHash(p.workspace), before, 'the workspace changed');
        await client.close();

        const mine = auditRecords(p.auditLog).filter((r) => r.actor === 'reviewer');
        const events = mine.map((r) => `${r.event}/${r.outcome}`);
        assert.ok(events.includes('attach/ok'), events.join(' '));
        assert.ok(events.includes('sandbox.write_file/denied'), events.join(' '));
        assert.ok(events.includes('sandbox.execute/denied'), events.join(' '));
        assert.ok(events.includes('sandbox.read_file/ok'), events.join(' '));
        assert.ok(events.includes('sandbox.list_dir/ok'), events.join(' '));
        assert.ok(!JSON.stringify(mine).includes('pwned'), 'the audit log holds command text');
    });

    test('a read-write token can execute and write', async () => {
        const { client, transport } = await connect(server.agents.coder.token);
        const tools = (await client.listTools()).tools.map((t) => t.name).sort();
        assert.deepEqual(tools, READ_WRITE_TOOLS);
        const w = await client.callTool({ name: 'write_file', arguments: { path: 'out/hello.txt', content: 'hello\n' } });
        assert.equal(w.isError, false, text(w));
        assert.equal(readFileSync(join(p.workspace, 'out/hello.txt'), 'utf8'), 'hello\n');
        const x = await client.callTool({ name: 'execute', arguments: { command: 'cat out/hello.txt; echo err >&2; exit 4' } });
        assert.equal(x.isError, false);
        assert.match(text(x), /^hello\n\[stderr\]\nerr\n\[exit code: 4\]$/);
        assert.equal(x.structuredContent.exit_code, 4);
        assert.ok(transport.sessionId, 'the server gave a session id');
        await transport.terminateSession(); // DELETE
        await client.close();
        const coder = auditRecords(p.auditLog).filter((r) => r.actor === 'coder').map((r) => r.event);
        assert.ok(coder.includes('sandbox.execute') && coder.includes('sandbox.write_file'));
        assert.ok(coder.includes('detach'), 'DELETE detaches the session agent');
    });

    test('versions: the latest is negotiated, an unknown offer is never echoed', async () => {
        const { client, transport } = await connect(server.agents.reviewer.token);
        assert.equal(transport.protocolVersion, '2025-11-25'); // SDK 1.x's latest
        await client.close();
        const auth = { Authorization: `Bearer ${server.agents.reviewer.token}` };
        for (const offered of ['2099-01-01', '2026-07-28']) {
            const r = await rawPost(auth, initBody.replace('2025-06-18', offered));
            assert.equal(r.status, 200);
            assert.equal(JSON.parse(r.body).result.protocolVersion, '2025-11-25');
        }
        const header = await rawPost({ ...auth, 'MCP-Protocol-Version': '2099-01-01' }, initBody);
        assert.equal(header.status, 400);
    });

    test('unknown arguments are refused by name', async () => {
        const { client } = await connect(server.agents.reviewer.token);
        const r = await client.callTool({ name: 'read_file', arguments: { path: 'README.md', lines: 2 } });
        assert.equal(r.isError, true);
        assert.match(text(r), /unknown argument 'lines'; it takes/);
        await client.close();
    });

    test('a body over the 64 MiB cap gets 413 before it is sent', async () => {
        const { coder } = server.agents;
        const res = await new Promise((resolve, reject) => {
            const req = request(server.url, { method: 'POST', headers: {
                Authorization: `Bearer ${coder.token}`, 'Content-Type': 'application/json',
                Accept: 'application/json, text/event-stream', 'Content-Length': String(200 * 1024 * 1024) } },
            (r) => {
                let data = '';
                r.on('data', (d) => { data += d; });
                r.on('end', () => resolve({ status: r.statusCode, body: data }));
            });
            req.on('error', reject);
            req.write('{"jsonrpc":"2.0",'); // the rest never comes: the headers decide
        });
        assert.equal(res.status, 413);
        assert.match(JSON.parse(res.body).error.message, /limit of 67108864 bytes per MCP message/);
    });

    test('a wrong or missing token gets 401 before anything else', async () => {
        await assert.rejects(connect('wrong-token-0123456789abcdef'));
        const missing = await rawPost({}, initBody);
        assert.equal(missing.status, 401);
        assert.match(missing.headers['www-authenticate'], /^Bearer/);
        const wrongAndForeign = await rawPost({ Authorization: 'Bearer nope-0123456789abcdef',
                                                Origin: 'http://evil.example' }, 'not json');
        assert.equal(wrongAndForeign.status, 401);
    });

    test('a foreign Origin gets 403', async () => {
        const token = server.agents.coder.token;
        const foreign = await rawPost({ Authorization: `Bearer ${token}`, Origin: 'http://evil.example' }, initBody);
        assert.equal(foreign.status, 403);
        const local = await rawPost({ Authorization: `Bearer ${token}`, Origin: 'http://localhost:3000' }, initBody);
        assert.equal(local.status, 200);
        // DNS rebinding without an Origin: the attacker's name arrives in Host.
        const rebound = await rawPost({ Authorization: `Bearer ${token}`, Host: 'evil.example:80' }, initBody);
        assert.equal(rebound.status, 403);
    });

    test('cancelling a running execute kills its process tree', async () => {
        const { client } = await connect(server.agents.coder.token);
        const controller = new AbortController();
        const call = client.callTool({ name: 'execute', arguments: {
            command: 'sleep 300 & echo $! > sleeper.pid; wait' } }, undefined, { signal: controller.signal });
        const pidFile = join(p.workspace, 'sleeper.pid');
        let pid = 0;
        await until(() => {
            try { pid = Number(readFileSync(pidFile, 'utf8').trim()); } catch { pid = 0; }
            return pid > 0;
        }, 'the sleep to start');
        assert.ok(alive(pid));
        controller.abort('test cancels');
        await assert.rejects(call);
        await until(() => !alive(pid), 'the sleep to be killed');
        // The server is still fine for this client.
        const r = await client.callTool({ name: 'execute', arguments: { command: 'echo still here' } });
        assert.match(text(r), /^still here/);
        await client.close();
    });

    test('a command longer than the request timeout completes through progress resets', async () => {
        const { client } = await connect(server.agents.coder.token);
        const command = 'for i in 1 2 3 4; do echo "line $i"; sleep 1; done';
        const progress = [];
        const r = await client.callTool({ name: 'execute', arguments: { command } }, undefined, {
            timeout: 1500, resetTimeoutOnProgress: true, onprogress: (p) => progress.push(p) });
        assert.equal(text(r), 'line 1\nline 2\nline 3\nline 4\n[exit code: 0]');
        assert.ok(progress.length >= 3, `only ${progress.length} progress notifications`);
        for (let i = 1; i < progress.length; ++i)
            assert.ok(progress[i].progress > progress[i - 1].progress, 'progress must grow');
        assert.match(progress.at(-1).message, /^execute running for [\d.]+ s; \d+ bytes of output so far$/);
        // The output size so far is reported: some of the lines had arrived.
        assert.ok(progress.some((p) => /; [1-9]\d* bytes/.test(p.message)), JSON.stringify(progress));
        // Without the reset the same call times out: the test measures what it claims.
        await assert.rejects(client.callTool({ name: 'execute', arguments: { command: 'sleep 4' } },
                                             undefined, { timeout: 1500 }), /timed out/i);
        await client.close();
    });

    test('a quick call with a progress token answers plain JSON', async () => {
        const { coder } = server.agents;
        const init = await rawPost({ Authorization: `Bearer ${coder.token}` }, initBody);
        const session = init.headers['mcp-session-id'];
        // A loaded machine (the sanitizer stage) may take longer than the 0.3 s progress
        // interval to start a shell, and then rightly streams: a few tries.
        let call;
        for (let i = 0; i < 5; ++i) {
            call = await rawPost({ Authorization: `Bearer ${coder.token}`, 'Mcp-Session-Id': session },
                JSON.stringify({ jsonrpc: '2.0', id: 100 + i, method: 'tools/call', params: {
                    name: 'execute', arguments: { command: 'echo quick' }, _meta: { progressToken: 7 } } }));
            if (/^application\/json/.test(call.headers['content-type'] ?? '')) break;
        }
        assert.equal(call.status, 200);
        assert.match(call.headers['content-type'], /^application\/json/);
        assert.match(JSON.parse(call.body).result.content[0].text, /^quick\n/);
        // A slow one streams: progress events first, the response last.
        const slow = await rawPost({ Authorization: `Bearer ${coder.token}`, 'Mcp-Session-Id': session },
            JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: {
                name: 'execute', arguments: { command: 'sleep 1; echo slow' }, _meta: { progressToken: 'p3' } } }));
        assert.equal(slow.status, 200);
        assert.match(slow.headers['content-type'], /^text\/event-stream/);
        const events = slow.body.split('\n\n').filter(Boolean).map((e) => JSON.parse(e.replace(/^event: message\ndata: /, '')));
        assert.ok(events.length >= 2);
        for (const e of events.slice(0, -1)) {
            assert.equal(e.method, 'notifications/progress');
            assert.equal(e.params.progressToken, 'p3');
        }
        assert.equal(events.at(-1).id, 3);
        assert.match(events.at(-1).result.content[0].text, /^slow\n/);
    });

    test('many sessions at once do not block each other', async () => {
        const clients = await Promise.all(Array.from({ length: 6 }, (_, i) =>
            connect(server.agents.coder.token, `parallel-${i}`)));
        // The first waits for a file that only the last creates.
        const waiting = clients[0].client.callTool({ name: 'execute', arguments: {
            command: 'while [ ! -f go ]; do sleep 0.02; done; echo went' } });
        const middle = await Promise.all(clients.slice(1, 5).map(({ client }, i) =>
            client.callTool({ name: 'execute', arguments: { command: `echo ${i}` } })));
        middle.forEach((r, i) => assert.match(text(r), new RegExp(`^${i}\n`)));
        await clients[5].client.callTool({ name: 'write_file', arguments: { path: 'go', content: '' } });
        assert.match(text(await waiting), /^went/);
        await Promise.all(clients.map(({ client }) => client.close()));
    });
});

// The soft return for SDK 1.x with its default settings (no progress reset): scaled down, a
// 1 s soft return under a 4 s request timeout (the SDK's default is 60 s, ours 45 s).
describe('the soft return with default client settings (SDK 1.x)', () => {
    before(async () => {
        p = makeProject({ 'README.md': '# demo\n' });
        server = await startHttpServer(p, ['coder=read_write'], ['--execute-soft-return', '1']);
    });
    after(async () => {
        assert.equal(await server.stop(), 143);
        p.remove();
    });

    test('a long command returns while it runs, then finishes as a background process', async () => {
        const { client } = await connect(server.agents.coder.token);
        const r = await client.callTool({ name: 'execute', arguments: {
            command: 'echo first; sleep 3; echo second' } }, undefined, { timeout: 4000 });
        assert.equal(r.isError, false, text(r));
        assert.match(text(r), /^first\n/);
        assert.match(text(r), /still running/i);
        const id = r.structuredContent.process_id;
        let out = '';
        let running = true;
        for (let i = 0; i < 20 && running; ++i) {
            const o = await client.callTool({ name: 'process_output', arguments: {
                process_id: id, offset: 0, wait: 2 } }, undefined, { timeout: 4000 });
            assert.equal(o.isError, false, text(o));
            out = text(o);
            running = o.structuredContent.running;
        }
        assert.equal(running, false);
        assert.match(out, /^first\nsecond\n\[ended, exit code 0/);
        await client.close();
    });
});
