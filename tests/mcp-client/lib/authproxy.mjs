// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// A loopback HTTP proxy that adds `Authorization: Bearer TOKEN` to every request: the
// conformance CLI has no option for a bearer token, and the server refuses requests without one.
// Every other header (Host and Origin included) passes through unchanged.
import { createServer, request } from 'node:http';

export function startAuthProxy(target, token) {
    const upstream = new URL(target);
    const server = createServer((req, res) => {
        const headers = { ...req.headers, authorization: `Bearer ${token}` };
        const out = request({ host: upstream.hostname, port: upstream.port, method: req.method,
                              path: req.url, headers }, (up) => {
            res.writeHead(up.statusCode, up.headers);
            up.pipe(res);
        });
        out.on('error', () => { res.writeHead(502); res.end(); });
        req.pipe(out);
        res.on('close', () => out.destroy());
    });
    return new Promise((resolve) => {
        server.listen(0, '127.0.0.1', () => resolve({
            url: `http://127.0.0.1:${server.address().port}${upstream.pathname}`,
            close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(r); }),
        }));
    });
}
