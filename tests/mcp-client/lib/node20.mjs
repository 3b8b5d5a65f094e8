// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Lets the conformance CLI run on Node.js 20 (`node --import ./lib/node20.mjs …`): it imports
// fs.globSync, new in Node.js 22, for its report commands only (`**/checks.json`). Its imports
// of `fs` get this module: node:fs plus a globSync for that one pattern form. Does nothing on
// Node.js 22 and later.
import fs from 'node:fs';
import { register } from 'node:module';

if (typeof fs.globSync !== 'function')
    register('./node20-hooks.mjs', import.meta.url);
