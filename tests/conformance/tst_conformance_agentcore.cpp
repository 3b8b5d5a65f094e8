// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The conformance suite against AgentCoreSandboxBackend over the loopback Code Interpreter
// (tests/fakeagentcore.h), which checks every SigV4 signature and answers event streams.

#include "conformance.h"
#include "fakeagentcore.h"

using elsai::aws::AgentCoreSandboxBackend;
using elsai::test::FakeAgentCore;

int main(int argc, char **argv)
{
    // made on first use: the fake's server thread needs the suite's QCoreApplication
    std::shared_ptr<FakeAgentCore> fake;
    int serial = 0;
    // Members are destroyed in reverse order: the backend (which stops its session) first.
    struct Holder
    {
        std::shared_ptr<FakeAgentCore> fake;
        std::shared_ptr<AgentCoreSandboxBackend> backend;
    };
    BackendFixture fixture{
        QStringLiteral("agentcore"), [&]() -> std::shared_ptr<elsai::SandboxBackend> {
            if (!fake)
                fake = std::make_shared<FakeAgentCore>();
            auto holder = std::make_shared<Holder>(
                Holder{fake, std::make_shared<AgentCoreSandboxBackend>(
                                 QStringLiteral("conformance-%1").arg(++serial), fake->options())});
            holder->backend->create();
            return std::shared_ptr<elsai::SandboxBackend>(holder, holder->backend.get());
        }};
    fixture.listsSymlinks = false; // listFiles answers resource links: files and folders only
    // no reopen: a Code Interpreter session (and its files) ends with its backend
    fixture.largestTransfer = [&] { return fake->server().largestResponse(); };
    fixture.resetTransfer = [&] { fake->server().resetLargestResponse(); };
    fixture.roundTrips = [&] { return qint64(fake->server().requestCount()); };
    fixture.teardown = [&] { fake.reset(); }; // the fake server stops with the suite
    return runBackendConformance(argc, argv, fixture);
}
