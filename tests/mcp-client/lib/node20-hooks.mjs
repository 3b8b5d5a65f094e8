// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Module hooks of node20.mjs: the conformance CLI's `fs` resolves to node20-fs.mjs.
const shim = new URL('./node20-fs.mjs', import.meta.url).href;

export async function resolve(specifier, context, next) {
    if ((specifier === 'fs' || specifier === 'node:fs') &&
        context.parentURL?.includes('/@modelcontextprotocol/conformance/'))
        return { url: shim, shortCircuit: true };
    if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes('/conformance-next/'))
        return { url: shim, shortCircuit: true };
    return next(specifier, context);
}
