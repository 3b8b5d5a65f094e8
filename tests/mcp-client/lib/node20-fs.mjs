// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// node:fs with a globSync for `**/NAME` patterns (all the conformance CLI asks of it).
import fs from 'node:fs';

export * from 'node:fs';
export default fs;

export function globSync(pattern, { cwd = '.' } = {}) {
    const m = /^\*\*\/([^*?/[\]{}]+)$/.exec(pattern);
    if (!m) throw new Error(`globSync on Node.js 20 takes **/NAME only, not ${pattern}`);
    return fs.readdirSync(cwd, { recursive: true })
        .filter((path) => path === m[1] || path.endsWith(`/${m[1]}`));
}
