// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The MCP conformance suite against elsai-workbench over Streamable HTTP: the latest release
// (@modelcontextprotocol/conformance, suite "all", the session-based revisions) and the newest
// pre-release (conformance-next, the 2026-07-28 requirements). Scenarios that cannot apply to a
// sandbox server are listed, with reasons, in the expected-failures files; any other failure
// fails this test. Both CLIs want Node.js 22; lib/node20.mjs lets them run on 20.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { startAuthProxy } from './lib/authproxy.mjs';
import { makeProject, startHttpServer } from './lib/server.mjs';

const cli = 'node_modules/@modelcontextprotocol/conformance/dist/index.js';
const nextCli = 'node_modules/conformance-next/dist/index.js';

async function runSuite(cliPath, args) {
    const p = makeProject();
    const server = await startHttpServer(p, ['conformance=read_write']);
    // The CLI sends no bearer token; the proxy adds the agent's (Origin and Host pass through).
    const proxy = await startAuthProxy(server.url, server.agents.conformance.token);
    const outDir = mkdtempSync(join(tmpdir(), 'elsai-conformance-'));
    const child = spawn(process.execPath, ['--import', './lib/node20.mjs', cliPath, 'server', '--url', proxy.url,
                                           ...args, '-o', outDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => { output += d; });
    child.stderr.on('data', (d) => { output += d; });
    const code = await new Promise((resolve) => child.on('exit', resolve));
    await proxy.close();
    assert.equal(await server.stop(), 143); // 128 + SIGTERM
    p.remove();
    const checks = {};
    for (const dir of readdirSync(outDir, { recursive: true })) {
        if (!dir.endsWith('checks.json')) continue;
        for (const c of JSON.parse(readFileSync(join(outDir, dir), 'utf8')))
            (checks[c.id] ??= []).push(c.status);
    }
    rmSync(outDir, { recursive: true, force: true });
    return { code, output, checks };
}

// Every failing scenario is explained in conformance-2026-expected-failures.yml: they call the
// reference server's fixture tools, resources and prompts, which a sandbox does not have.
test('conformance of the stateless revision 2026-07-28 (pre-release suite)', async () => {
    const { code, output, checks } = await runSuite(nextCli, [
        '--requirements', '2026-07-28', '--expected-failures', 'conformance-2026-expected-failures.yml']);
    const summary = output.split('\n').filter((l) => /^[✓✗] |^Total|Baseline|Unexpected|stale/i.test(l));
    console.log(summary.join('\n'));
    assert.equal(code, 0, `conformance failed beyond the documented baseline:\n${output.slice(-4000)}`);
    for (const id of ['sep-2575-server-implements-discover', 'sep-2575-server-unsupported-version-error',
                      'sep-2575-http-server-unsupported-version-400', 'sep-2575-http-server-header-mismatch-400',
                      'sep-2575-request-meta-invalid-missing-meta', 'sep-2575-http-server-method-not-found-404',
                      'sep-2575-http-server-method-not-found-404-initialize', 'sep-2575-server-identifies-in-result-meta',
                      'sep-2575-server-sends-subscription-ack', 'sep-2549-tools-list-caching-hints',
                      'sep-2663-tasks-methods-non-declaring']) {
        assert.deepEqual(checks[id], ['SUCCESS'], `check ${id}: ${checks[id]}`);
    }
});

test('conformance suite: every applicable scenario passes', async () => {
    const { code, output, checks } = await runSuite(cli, [
        '--suite', 'all', '--expected-failures', 'conformance-expected-failures.yml']);
    const summary = output.split('\n').filter((l) => /^[✓✗] |^Total|Baseline|Unexpected|stale/i.test(l));
    console.log(summary.join('\n'));
    assert.equal(code, 0, `conformance failed beyond the documented baseline:\n${output.slice(-4000)}`);

    // The scenarios that apply must have run and passed, check by check.
    for (const id of ['server-initialize', 'ping', 'tools-list']) {
        assert.deepEqual(checks[id], ['SUCCESS'], `check ${id}: ${checks[id]}`);
    }
    // DNS rebinding: a foreign Host/Origin is refused, a local one accepted.
    for (const id of ['localhost-host-rebinding-rejected', 'localhost-host-valid-accepted']) {
        assert.deepEqual(checks[id], ['SUCCESS'], `check ${id}: ${checks[id]}`);
    }
});
