// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The conformance suite against DaytonaSandboxBackend over the loopback protocol server
// (tests/fakedaytona.h): the backend's wire protocol for real, commands run by /bin/sh.

#include "conformance.h"
#include "fakedaytona.h"

using elsai::DaytonaSandboxBackend;
using elsai::test::FakeDaytona;

int main(int argc, char **argv)
{
    // made on first use: the fake's server thread needs the suite's QCoreApplication
    std::shared_ptr<FakeDaytona> fake;
    int serial = 0;
    // The backend is declared last so it goes first: it may still close its sandbox.
    struct Holder
    {
        std::shared_ptr<FakeDaytona> fake;
        std::shared_ptr<DaytonaSandboxBackend> backend;
    };
    const auto build = [&](const QString &existing) -> std::shared_ptr<elsai::SandboxBackend> {
        if (!fake)
            fake = std::make_shared<FakeDaytona>();
        DaytonaSandboxBackend::Options options = fake->options();
        options.existingSandbox = existing;
        auto holder = std::make_shared<Holder>(
            Holder{fake, std::make_shared<DaytonaSandboxBackend>(
                             QStringLiteral("conformance-%1").arg(++serial), options)});
        return std::shared_ptr<elsai::SandboxBackend>(holder, holder->backend.get());
    };
    BackendFixture fixture{QStringLiteral("daytona"), [&] {
                               auto b = build(QString());
                               b->create();
                               return b;
                           }};
    // the same sandbox, attached again as after a restart
    fixture.reopen = [&](elsai::SandboxBackend &old) {
        return build(dynamic_cast<DaytonaSandboxBackend &>(old).sandboxId());
    };
    fixture.largestTransfer = [&] { return fake->http().largestResponse(); };
    fixture.resetTransfer = [&] { fake->http().resetLargestResponse(); };
    fixture.roundTrips = [&] { return qint64(fake->http().requestCount()); };
    fixture.teardown = [&] { fake.reset(); }; // the fake server stops with the suite
    return runBackendConformance(argc, argv, fixture);
}
