// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The tool names each attach mode gets (core/sandboxplugin.cpp SandboxPlugin::tools, sorted):
// the spec's four plus the coding-agent tools of docs/tools.md. tst_sandboxplugin checks the
// C++ side; these tests check what a real client lists.
export const READ_ONLY_TOOLS = ['glob', 'grep', 'list_dir', 'read_file', 'read_many', 'stat', 'tree'];
export const READ_WRITE_TOOLS = [
    'delete', 'edit_file', 'execute', 'glob', 'grep', 'list_dir', 'mkdir', 'move',
    'process_input', 'process_list', 'process_output', 'process_start', 'process_stop',
    'read_file', 'read_many', 'stat', 'tree', 'write_file',
];
// What a read-only agent must never see.
export const MUTATING_TOOLS = READ_WRITE_TOOLS.filter((t) => !READ_ONLY_TOOLS.includes(t));
