// The conformance suite against DaytonaSandboxBackend over the loopback protocol server
// (tests/fakedaytona.h): the backend's wire protocol for real, commands run by /bin/sh.

#include "conformance.h"
#include "fakedaytona.h"

int main(int argc, char **argv)
{
    // made on first use: the fake's server thread needs the suite's QCoreApplication
    std::function<std::shared_ptr<elsai::SandboxBackend>()> factory;
    BackendFixture fixture{QStringLiteral("daytona"), [&] {
                                     if (!factory)
                                         factory = elsai::test::FakeDaytona::backendFactory();
                                     auto b = factory();
                                     b->create();
                                     return b;
                                 }};
    fixture.teardown = [&] { factory = nullptr; }; // the fake server stops with the suite
    return runBackendConformance(argc, argv, fixture);
}
