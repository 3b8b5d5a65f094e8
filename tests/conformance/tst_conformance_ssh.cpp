// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The conformance suite against SshSandboxBackend over a throwaway sshd on 127.0.0.1
// (tests/sshfixture.h); skipped as a whole, with the fixture's reason, where sshd cannot run.

#include "conformance.h"
#include "errors.h"
#include "sshfixture.h"

int main(int argc, char **argv)
{
    elsai::test::SshServer sshd;
    const bool started = sshd.start();
    const auto factory = sshd.factory();
    BackendFixture fixture{QStringLiteral("ssh"), [&]() -> std::shared_ptr<elsai::SandboxBackend> {
                               if (!started)
                                   throw elsai::SandboxStartError(sshd.error());
                               auto b = factory();
                               b->create();
                               return b;
                           }};
    // the same remote folder through a new connection, as after a restart
    fixture.reopen = [&](elsai::SandboxBackend &old) -> std::shared_ptr<elsai::SandboxBackend> {
        return sshd.makeBackend(
            dynamic_cast<elsai::SshSandboxBackend &>(old).options().workspaceName);
    };
    // every operation is one remote command, which sshd logs (LogLevel VERBOSE)
    fixture.roundTrips = [&] { return qint64(sshd.log().count("Starting session: command")); };
    return runBackendConformance(argc, argv, fixture);
}
