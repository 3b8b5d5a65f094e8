// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The conformance suite against LocalSandboxBackend.

#include "conformance.h"
#include "localsandboxbackend.h"

#include <QDir>
#include <QTemporaryDir>

int main(int argc, char **argv)
{
    QTemporaryDir dir;
    int serial = 0;
    BackendFixture fixture{QStringLiteral("local"), [&] {
                               const QString root =
                                   dir.filePath(QStringLiteral("ws%1").arg(++serial));
                               QDir().mkpath(root);
                               auto b = std::make_shared<elsai::LocalSandboxBackend>(root);
                               b->create();
                               return b;
                           }};
    fixture.reopen = [](elsai::SandboxBackend &old) -> std::shared_ptr<elsai::SandboxBackend> {
        return std::make_shared<elsai::LocalSandboxBackend>(old.hostFolder());
    };
    return runBackendConformance(argc, argv, fixture);
}
