// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The TypeScript SDK's 2.x client packages spawning `elsai-workbench --headless --mcp-stdio`:
// the stateless revision 2026-07-28 on stdio, and the session-based one on the same program.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { makeProject, sandboxArgs, workbench } from './lib/server.mjs';
import { READ_WRITE_TOOLS } from './lib/tools.mjs';

const MODERN = '2026-07-28';

function text(result) {
    return result.content.map((c) => c.text).join('');
}

async function spawnClient(p, agent, { era = 'modern', extraArgs = [] } = {}) {
    const transport = new StdioClientTransport({
        command: workbench,
        args: [...sandboxArgs(p), '--mcp-stdio', '--mcp-agent', agent, ...extraArgs],
        stderr: 'pipe',
    });
    const options = {};
    if (era === 'modern') options.versionNegotiation = { mode: { pin: MODERN } };
    const client = new Client({ name: 'sdk2-stdio', version: '2.0.0' }, options);
    await client.connect(transport);
    return { client, transport };
}

/** The server driven with raw JSON lines: what the SDK does not show (task handles, listen). */
function rawServer(p, agent, extraArgs = []) {
    const proc = spawn(workbench, [...sandboxArgs(p), '--mcp-stdio', '--mcp-agent', agent, ...extraArgs],
                       { stdio: ['pipe', 'pipe', 'ignore'] });
    const waiting = [];
    const seen = [];
    createInterface({ input: proc.stdout }).on('line', (line) => {
        const m = JSON.parse(line);
        seen.push(m);
        for (const w of [...waiting]) {
            if (w.match(m)) {
                waiting.splice(waiting.indexOf(w), 1);
                w.resolve(m);
            }
        }
    });
    const next = (match) => {
        const found = seen.find(match);
        if (found) {
            seen.splice(seen.indexOf(found), 1);
            return Promise.resolve(found);
        }
        return new Promise((resolve) => waiting.push({ match: (m) => {
            if (!match(m)) return false;
            seen.splice(seen.indexOf(m), 1);
            return true;
        }, resolve }));
    };
    const send = (m) => proc.stdin.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
    const request = (id, method, params = {}, capabilities = {}) => {
        send({ id, method, params: { ...params, _meta: {
            'io.modelcontextprotocol/protocolVersion': MODERN,
            'io.modelcontextprotocol/clientCapabilities': capabilities } } });
        return next((m) => m.id === id);
    };
    const close = () => new Promise((resolve) => { proc.on('exit', resolve); proc.stdin.end(); });
    return { send, request, next, close };
}

const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

describe('stdio with the SDK 2.x client', () => {
    let p;
    before(() => {
        p = makeProject({ 'README.md': '# demo\n' });
    });
    after(() => p.remove());

    test('the stateless revision needs no initialize; the legacy handshake still works', async () => {
        const modern = await spawnClient(p, 'coder=read_write');
        assert.equal(modern.client.getProtocolEra(), 'modern');
        const tools = (await modern.client.listTools()).tools.map((t) => t.name).sort();
        assert.deepEqual(tools, READ_WRITE_TOOLS);
        const r = await modern.client.callTool({ name: 'execute', arguments: { command: 'cat README.md' } });
        assert.equal(text(r), '# demo\n[exit code: 0]');
        await modern.client.close();
        const legacy = await spawnClient(p, 'coder=read_write', { era: 'legacy' });
        assert.equal(legacy.client.getProtocolEra(), 'legacy');
        assert.equal(text(await legacy.client.callTool({ name: 'read_file', arguments: { path: 'README.md' } })),
                     '# demo\n');
        await legacy.client.close();
    });

    test('a command longer than the request timeout completes through progress resets', async () => {
        const { client } = await spawnClient(p, 'coder=read_write', { extraArgs: ['--mcp-progress-interval', '0.3'] });
        const progress = [];
        const r = await client.callTool({ name: 'execute', arguments: {
            command: 'for i in 1 2 3 4; do echo "line $i"; sleep 1; done' } }, {
            timeout: 1500, resetTimeoutOnProgress: true, onprogress: (n) => progress.push(n) });
        assert.equal(text(r), 'line 1\nline 2\nline 3\nline 4\n[exit code: 0]');
        assert.ok(progress.length >= 3, `only ${progress.length} progress notifications`);
        await client.close();
    });

    test('a long call becomes a task; its status comes on a listen stream; tasks/get has the output', async () => {
        const s = rawServer(p, 'coder=read_write', ['--mcp-progress-interval', '0.3']);
        const created = await s.request(1, 'tools/call', { name: 'execute', arguments: {
            command: 'for i in 1 2 3 4; do echo "line $i"; sleep 1; done' } }, TASKS);
        assert.equal(created.result.resultType, 'task');
        const { taskId } = created.result;
        s.send({ id: 'listen', method: 'subscriptions/listen', params: { notifications: { taskIds: [taskId] },
            _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN,
                     'io.modelcontextprotocol/clientCapabilities': TASKS } } });
        const ack = await s.next((m) => m.method === 'notifications/subscriptions/acknowledged');
        assert.deepEqual(ack.params.notifications.taskIds, [taskId]);
        assert.equal(ack.params._meta['io.modelcontextprotocol/subscriptionId'], 'listen');
        const working = await s.request(2, 'tasks/get', { taskId }, TASKS);
        assert.equal(working.result.status, 'working');
        const status = await s.next((m) => m.method === 'notifications/tasks');
        assert.equal(status.params.status, 'completed');
        assert.equal(text(status.params.result), 'line 1\nline 2\nline 3\nline 4\n[exit code: 0]');
        const done = await s.request(3, 'tasks/get', { taskId }, TASKS);
        assert.equal(text(done.result.result), 'line 1\nline 2\nline 3\nline 4\n[exit code: 0]');
        // notifications/cancelled ends the listen stream; the task is not a request any more.
        s.send({ method: 'notifications/cancelled', params: { requestId: 'listen' } });
        assert.equal((await s.close()), 0);
    });

    test("unknown versions and unknown arguments get the spec's answers", async () => {
        const s = rawServer(p, 'coder=read_write');
        s.send({ id: 9, method: 'server/discover', params: { _meta: {
            'io.modelcontextprotocol/protocolVersion': '2099-01-01', 'io.modelcontextprotocol/clientCapabilities': {} } } });
        const unknown = await s.next((m) => m.id === 9);
        assert.equal(unknown.error.code, -32022);
        assert.deepEqual(unknown.error.data.requested, '2099-01-01');
        assert.ok(unknown.error.data.supported.includes(MODERN));
        s.send({ id: 10, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } } });
        assert.equal((await s.next((m) => m.id === 10)).error.code, -32602); // no capabilities
        await s.close();
        const { client } = await spawnClient(p, 'coder=read_write');
        const r = await client.callTool({ name: 'read_file', arguments: { path: 'README.md', lines: 2 } });
        assert.equal(r.isError, true);
        assert.match(text(r), /unknown argument 'lines'/);
        await client.close();
    });
});
