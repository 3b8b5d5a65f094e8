// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The target that builds the tests' precompiled header (tests/CMakeLists.txt); never run.

int main()
{
    return 0;
}
