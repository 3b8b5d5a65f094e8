// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The conformance suite against DockerSandboxBackend on a real container engine (Docker or
// Podman; tests/dockerfixture.h says which and how): skipped with the reason when none runs.

#include "conformance.h"
#include "dockerfixture.h"
#include "errors.h"

#include <QSet>

using elsai::DockerSandboxBackend;
using elsai::test::DockerEngine;

int main(int argc, char **argv)
{
    int serial = 0;
    // Backends handed to a reopen() stay open for their successor (a restart closes nothing);
    // every other one is closed (its container removed) when the case lets it go.
    auto reopened = std::make_shared<QSet<const elsai::SandboxBackend *>>();
    const auto own = [reopened](std::shared_ptr<DockerSandboxBackend> b) {
        return std::shared_ptr<elsai::SandboxBackend>(
            b.get(), [b, reopened](elsai::SandboxBackend *p) {
                if (!reopened->remove(p)) {
                    try {
                        b->close();
                    } catch (const elsai::SandboxError &e) {
                        qWarning("closing a test container: %s", qPrintable(e.display()));
                    }
                }
            });
    };
    BackendFixture fixture{
        QStringLiteral("docker"), [&]() -> std::shared_ptr<elsai::SandboxBackend> {
            if (const QString why = DockerEngine::unavailable(); !why.isEmpty())
                throw elsai::SandboxStartError(why);
            auto b = DockerEngine::makeBackend(QStringLiteral("conformance-%1").arg(++serial));
            b->create();
            return own(b);
        }};
    // the same workspace id again: the container is found by its labels
    fixture.reopen = [&](elsai::SandboxBackend &old) -> std::shared_ptr<elsai::SandboxBackend> {
        reopened->insert(&old);
        auto &d = dynamic_cast<DockerSandboxBackend &>(old);
        return own(
            std::make_shared<DockerSandboxBackend>(d.workspaceId(), DockerEngine::options()));
    };
    fixture.teardown = [] { DockerEngine::cleanUp(); };
    return runBackendConformance(argc, argv, fixture);
}
