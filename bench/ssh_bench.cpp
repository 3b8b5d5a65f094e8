// execute("true") through SshSandboxBackend against a bare `ssh … true` over the SAME
// ControlMaster connection (the floor: one mux channel, one remote login shell). A throwaway
// sshd on 127.0.0.1 (tests/sshfixture.h) is the remote.
//
// Usage: ssh_bench [calls per variant, default 200]

#include "pairbench.h"
#include "sshfixture.h"

#include <QStandardPaths>

#include <cstdlib>

int main(int argc, char **argv)
{
    const int calls = argc > 1 ? std::max(10, std::atoi(argv[1])) : 200;

    elsai::test::SshServer sshd;
    if (!sshd.start()) {
        std::fprintf(stderr, "ssh_bench: %s\n", qPrintable(sshd.error()));
        return 2;
    }
    const auto backend = sshd.makeBackend(QStringLiteral("bench"));
    backend->create();
    const auto conn = backend->connection();
    std::vector<QByteArray> bare{QStandardPaths::findExecutable(QStringLiteral("ssh")).toUtf8()};
    for (const QString &a : conn->clientArguments("true"))
        bare.push_back(a.toUtf8());

    elsai::bench::PairResult r;
    const bool ran = elsai::bench::runPair(
        "ssh_bench", calls, 10, 10,
        [&] { return backend->execute(QStringLiteral("true")).exitCode == 0; },
        [&] { return elsai::bench::spawnAndWait(bare, environ, true); }, &r);
    backend->close();
    if (!ran)
        return 1;
    elsai::bench::printMedianRatio("execute over ssh", "bare ssh on the same master", r, 1.2);
    return r.failures == 0 ? 0 : 1;
}
