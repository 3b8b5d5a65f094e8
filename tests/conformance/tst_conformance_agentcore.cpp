// The conformance suite against AgentCoreSandboxBackend over the loopback Code Interpreter
// (tests/fakeagentcore.h), which checks every SigV4 signature and answers event streams.

#include "conformance.h"
#include "fakeagentcore.h"

int main(int argc, char **argv)
{
    // made on first use: the fake's server thread needs the suite's QCoreApplication
    std::function<std::shared_ptr<elsai::SandboxBackend>()> factory;
    const BackendFixture fixture{QStringLiteral("agentcore"), [&] {
                                     if (!factory)
                                         factory = elsai::test::FakeAgentCore::backendFactory();
                                     auto b = factory();
                                     b->create();
                                     return b;
                                 }};
    BackendFixture withCaps = fixture;
    withCaps.listsSymlinks = false; // listFiles answers resource links: files and folders only
    withCaps.teardown = [&] { factory = nullptr; }; // the fake server stops with the suite
    return runBackendConformance(argc, argv, withCaps);
}
