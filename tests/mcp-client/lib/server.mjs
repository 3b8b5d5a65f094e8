// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Starts the real elsai-workbench as an MCP server for the node tests and the bench.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const workbench = process.env.ELSAI_WORKBENCH;
if (!workbench) throw new Error('set ELSAI_WORKBENCH to the elsai-workbench executable');

/** A fresh project folder with a few files, and a temp folder for the workspace and logs. */
export function makeProject(files = { 'README.md': '# demo\n', 'src/app.py': 'print("hi")\n' }) {
    const dir = mkdtempSync(join(tmpdir(), 'elsai-mcp-test-'));
    for (const [path, content] of Object.entries(files)) {
        const full = join(dir, 'project', path);
        mkdirp(full.slice(0, full.lastIndexOf('/')));
        writeFileSync(full, content);
    }
    return { dir, project: join(dir, 'project'), workspace: join(dir, 'ws'),
             auditLog: join(dir, 'audit.jsonl'),
             remove: () => rmSync(dir, { recursive: true, force: true }) };
}

function mkdirp(path) {
    mkdirSync(path, { recursive: true });
}

/** The common options: a sandbox seeded from the project, audited to a file. */
export function sandboxArgs(p) {
    return ['--headless', '--workspace-root', p.workspace, '--seed-from', p.project,
            '--audit-log', p.auditLog, '--ttl', 'none'];
}

/**
 * Starts `elsai-workbench --mcp-http 0` with the given agents and resolves once it printed
 * one JSON line per agent: { proc, url, agents: {name: {mode, token, url}}, stop() }.
 */
export async function startHttpServer(p, agentSpecs, extraArgs = []) {
    const args = [...sandboxArgs(p), '--mcp-http', '0', ...extraArgs];
    for (const a of agentSpecs) args.push('--mcp-agent', a);
    const proc = spawn(workbench, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    proc.stderr.on('data', (d) => { stderr += d; });
    const agents = {};
    const lines = createInterface({ input: proc.stdout });
    await new Promise((resolve, reject) => {
        proc.on('exit', (code) => reject(new Error(`server exited (${code}): ${stderr}`)));
        lines.on('line', (line) => {
            const a = JSON.parse(line);
            agents[a.agent] = a;
            if (Object.keys(agents).length === agentSpecs.length) resolve();
        });
    });
    proc.removeAllListeners('exit');
    const url = Object.values(agents)[0].url;
    const stop = () => new Promise((resolve) => {
        if (proc.exitCode !== null) return resolve(proc.exitCode);
        proc.on('exit', (code) => resolve(code));
        proc.kill('SIGTERM');
    });
    return { proc, url, agents, stop, stderr: () => stderr };
}

/** SHA-256 over every path and file content under `root` (the workspace fingerprint). */
export function treeHash(root) {
    const h = createHash('sha256');
    const walk = (dir, rel) => {
        for (const name of readdirSync(dir).sort()) {
            const full = join(dir, name);
            const st = statSync(full);
            h.update(`${rel}${name}${st.isDirectory() ? '/' : ''}\n`);
            if (st.isDirectory()) walk(full, `${rel}${name}/`);
            else h.update(readFileSync(full));
        }
    };
    walk(root, '');
    return h.digest('hex');
}

/** Audit records (JSON lines) written so far. */
export function auditRecords(path) {
    try {
        return readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    } catch {
        return [];
    }
}

/** Whether a process id is alive. */
export function alive(pid) {
    try {
        process.kill(pid, 0);
        return true;
    } catch {
        return false;
    }
}

export async function until(predicate, what, timeoutMs = 20000) {
    const end = Date.now() + timeoutMs;
    while (Date.now() < end) {
        if (await predicate()) return;
        await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`timed out waiting for ${what}`);
}
