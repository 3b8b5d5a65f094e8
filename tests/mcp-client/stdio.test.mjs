// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The official TypeScript SDK spawning `elsai-workbench --headless --mcp-stdio`.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { alive, auditRecords, makeProject, sandboxArgs, treeHash, until, workbench } from './lib/server.mjs';
import { READ_ONLY_TOOLS, READ_WRITE_TOOLS } from './lib/tools.mjs';

function text(result) {
    return result.content.map((c) => c.text).join('');
}

async function spawnClient(p, agent, extraArgs = []) {
    const transport = new StdioClientTransport({
        command: workbench,
        args: [...sandboxArgs(p), '--mcp-stdio', '--mcp-agent', agent, ...extraArgs],
        stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d) => { stderr += d; });
    const client = new Client({ name: 'stdio-test', version: '1.0.0' });
    await client.connect(transport);
    return { client, transport, stderr: () => stderr };
}

describe('stdio with the SDK client', () => {
    let p;
    before(() => {
        p = makeProject({ 'README.md': '# demo\n', 'src/app.py': 'print("hi")\n' });
    });
    after(() => p.remove());

    test('a read-write agent executes and writes; stdout carries only protocol lines', async () => {
        const { client, stderr } = await spawnClient(p, 'coder=read_write');
        assert.equal(client.getServerVersion().name, 'elsai-workbench');
        const tools = (await client.listTools()).tools.map((t) => t.name).sort();
        assert.deepEqual(tools, READ_WRITE_TOOLS);
        const w = await client.callTool({ name: 'write_file', arguments: { path: 'made.txt', content: 'made\n' } });
        assert.equal(w.isError, false);
        const x = await client.callTool({ name: 'execute', arguments: { command: 'cat made.txt src/app.py' } });
        assert.match(text(x), /^made\nprint\("hi"\)\n\[exit code: 0\]$/);
        const r = await client.callTool({ name: 'read_file', arguments: { path: 'README.md' } });
        assert.equal(text(r), '# demo\n');
        await client.ping();
        await client.close();
        assert.equal(readFileSync(join(p.workspace, 'made.txt'), 'utf8'), 'made\n');
        assert.ok(!stderr().includes('"jsonrpc"'), 'protocol messages leaked to stderr');
        const events = auditRecords(p.auditLog).filter((e) => e.actor === 'coder').map((e) => e.event);
        assert.ok(events.includes('sandbox.execute') && events.includes('sandbox.write_file'));
    });

    test('a read-only agent over stdio cannot change the workspace', async () => {
        const { client } = await spawnClient(p, 'reader=read_only');
        const tools = (await client.listTools()).tools.map((t) => t.name).sort();
        assert.deepEqual(tools, READ_ONLY_TOOLS);
        const before = treeHash(p.workspace);
        const denied = await client.callTool({ name: 'write_file', arguments: { path: 'x', content: 'y' } });
        assert.equal(denied.isError, true);
        assert.match(text(denied), /^SandboxMutationDeniedError: /);
        const escape = await client.callTool({ name: 'read_file', arguments: { path: '../../../etc/passwd' } });
        assert.equal(escape.isError, true);
        assert.match(text(escape), /^PermissionError: /);
        assert.equal(treeHash(p.workspace), before);
        await client.close();
    });

    test('cancellation kills a running sleep and the server keeps serving', async () => {
        const { client } = await spawnClient(p, 'coder=read_write');
        const controller = new AbortController();
        const call = client.callTool({ name: 'execute', arguments: {
            command: 'sleep 300 & echo $! > stdio-sleeper.pid; wait' } }, undefined, { signal: controller.signal });
        let pid = 0;
        await until(() => {
            try { pid = Number(readFileSync(join(p.workspace, 'stdio-sleeper.pid'), 'utf8').trim()); } catch { pid = 0; }
            return pid > 0;
        }, 'the sleep to start');
        controller.abort('test cancels');
        await assert.rejects(call);
        await until(() => !alive(pid), 'the sleep to be killed');
        const r = await client.callTool({ name: 'execute', arguments: { command: 'echo alive' } });
        assert.match(text(r), /^alive/);
        await client.close();
    });

    test('a command longer than the request timeout completes through progress resets', async () => {
        const { client } = await spawnClient(p, 'coder=read_write', ['--mcp-progress-interval', '0.3']);
        const progress = [];
        const r = await client.callTool({ name: 'execute', arguments: {
            command: 'for i in 1 2 3 4; do echo "line $i"; sleep 1; done' } }, undefined, {
            timeout: 1500, resetTimeoutOnProgress: true, onprogress: (p) => progress.push(p) });
        assert.equal(text(r), 'line 1\nline 2\nline 3\nline 4\n[exit code: 0]');
        assert.ok(progress.length >= 3, `only ${progress.length} progress notifications`);
        for (let i = 1; i < progress.length; ++i)
            assert.ok(progress[i].progress > progress[i - 1].progress, 'progress must grow');
        assert.ok(progress.some((p) => /; [1-9]\d* bytes of output so far$/.test(p.message)), JSON.stringify(progress));
        await assert.rejects(client.callTool({ name: 'execute', arguments: { command: 'sleep 4' } },
                                             undefined, { timeout: 1500 }), /timed out/i);
        await client.close();
    });

    test('usage errors exit 2 with a message on stderr', () => {
        const none = spawnSync(workbench, [...sandboxArgs(p), '--mcp-stdio'], { input: '' });
        assert.equal(none.status, 2);
        assert.match(none.stderr.toString(), /--mcp-agent/);
        assert.equal(none.stdout.length, 0);
        const two = spawnSync(workbench, [...sandboxArgs(p), '--mcp-stdio', '--mcp-agent', 'a=read_only',
                                          '--mcp-agent', 'b=read_only'], { input: '' });
        assert.equal(two.status, 2);
        const remote = spawnSync(workbench, [...sandboxArgs(p), '--mcp-http', '0.0.0.0:0',
                                             '--mcp-agent', 'a=read_only'], { input: '' });
        assert.equal(remote.status, 2);
        assert.match(remote.stderr.toString(), /--mcp-allow-remote/);
    });
});
