// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The MCP conformance suite (@modelcontextprotocol/conformance, suite "all") against
// elsai-workbench over Streamable HTTP. Scenarios that cannot apply to a sandbox server are
// listed, with reasons, in conformance-expected-failures.yml; any other failure fails this test.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { startAuthProxy } from './lib/authproxy.mjs';
import { makeProject, startHttpServer } from './lib/server.mjs';

const cli = 'node_modules/@modelcontextprotocol/conformance/dist/index.js';

test('conformance suite: every applicable scenario passes', async () => {
    const p = makeProject();
    const server = await startHttpServer(p, ['conformance=read_write']);
    // The CLI sends no bearer token; the proxy adds the agent's (Origin and Host pass through).
    const proxy = await startAuthProxy(server.url, server.agents.conformance.token);
    const outDir = mkdtempSync(join(tmpdir(), 'elsai-conformance-'));
    const child = spawn(process.execPath, [cli, 'server', '--url', proxy.url, '--suite', 'all',
                                           '--expected-failures', 'conformance-expected-failures.yml',
                                           '-o', outDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => { output += d; });
    child.stderr.on('data', (d) => { output += d; });
    const code = await new Promise((resolve) => child.on('exit', resolve));
    await proxy.close();
    assert.equal(await server.stop(), 143); // 128 + SIGTERM
    p.remove();

    const summary = output.split('\n').filter((l) => /^[✓✗] |^Total|Baseline|Unexpected|stale/i.test(l));
    console.log(summary.join('\n'));
    assert.equal(code, 0, `conformance failed beyond the documented baseline:\n${output.slice(-4000)}`);

    // The scenarios that apply must have run and passed, check by check.
    const checks = {};
    for (const dir of readdirSync(outDir)) {
        for (const c of JSON.parse(readFileSync(join(outDir, dir, 'checks.json'), 'utf8')))
            (checks[c.id] ??= []).push(c.status);
    }
    rmSync(outDir, { recursive: true, force: true });
    for (const id of ['server-initialize', 'ping', 'tools-list']) {
        assert.deepEqual(checks[id], ['SUCCESS'], `check ${id}: ${checks[id]}`);
    }
    // DNS rebinding: a foreign Host/Origin is refused, a local one accepted.
    for (const id of ['localhost-host-rebinding-rejected', 'localhost-host-valid-accepted']) {
        assert.deepEqual(checks[id], ['SUCCESS'], `check ${id}: ${checks[id]}`);
    }
});
