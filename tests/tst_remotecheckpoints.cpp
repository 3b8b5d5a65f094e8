// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Time travel on the remote backends (docs/checkpoints.md, backends/remote/remotetree.h): the
// changes of every call (shell commands of every kind) attributed to it through the listing
// watch, restore to a full tree digest, incremental checkpoints, and a restore interrupted
// half-way finished by the next. SSH against the loopback sshd, Daytona and AgentCore against
// their fakes, all running the remote script on this host, so the workspace folder is also
// walked here for a digest nothing remote computed. One sandbox per backend for every case
// (one SSH connection in all): each case ends restored to the same checkpoint. (Docker:
// tst_dockerbackend, against a real engine.)
#include "agent.h"
#include "agentcorebackend.h"
#include "checkpointstore.h"
#include "confinedscript.h"
#include "errors.h"
#include "fakeagentcore.h"
#include "fakedaytona.h"
#include "sandbox.h"
#include "sshfixture.h"
#include "testutil.h"
#include "treesnapshot.h"
#include "treetestutil.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>

#include <fcntl.h>
#include <unistd.h>

using namespace elsai;
using test::digestOf;
using test::sh;

namespace {

QStringList strings(const QJsonValue &v)
{
    QStringList out;
    for (const QJsonValue &s : v.toArray())
        out.append(s.toString());
    return out;
}

/// One started sandbox on a remote backend, with checkpoints and change tracking on.
struct Remote
{
    SandboxPtr sandbox;
    AgentPtr agent;
    QString hostWs; ///< the workspace folder as this host sees it
    QByteArray baseDigest;
};

} // namespace

// The row's sandbox, or the test skipped when its backend cannot run here (QSKIP returns from
// the test function itself).
#define FETCH_REMOTE(r)                                                                            \
    QFETCH(QString, backend);                                                                      \
    Remote *r = remote(backend);                                                                   \
    if (!r) {                                                                                      \
        QSKIP(qPrintable(m_sshSkip));                                                              \
    }

class TestRemoteCheckpoints : public QObject
{
    Q_OBJECT

private:
    Remote *remote(const QString &name)
    {
        const auto it = m_remotes.find(name);
        return it == m_remotes.end() ? nullptr : &it->second;
    }
    void add(const QString &name, BackendPtr backend, const std::function<QString()> &hostWs)
    {
        Sandbox::Options options;
        options.timeTravel.checkpoints = true;
        options.timeTravel.trackChanges = true;
        options.timeTravel.baseline = false;
        options.timeTravel.folder = m_tmp.path() + QStringLiteral("/store");
        Remote r;
        r.sandbox = Sandbox::create(QStringLiteral("rc-") + name, backend, std::nullopt, options);
        r.sandbox->start();
        r.hostWs = hostWs();
        // every kind of entry a checkpoint records
        test::writeHostFile(r.hostWs + QStringLiteral("/src/main.py"), "print('hello')\n");
        test::writeHostFile(r.hostWs + QStringLiteral("/src/lib/util.py"),
                            "def f():\n  return 1\n");
        test::writeHostFile(r.hostWs + QStringLiteral("/data.bin"), QByteArray("\0\1\2bin\n", 7));
        test::writeHostFile(r.hostWs + QStringLiteral("/notes.txt"), "a\nb\nc\n");
        test::writeHostFile(r.hostWs + QStringLiteral("/odd\tname\\x"), "tab and backslash\n");
        sh(r.hostWs, QStringLiteral("chmod 755 src/main.py && chmod 600 notes.txt && "
                                    "mkdir -p empty/deeper && mkdir ro && echo x > ro/in && "
                                    "chmod 555 ro && ln -s src/main.py link && "
                                    "ln -s /etc/passwd abs-link && ln -s missing dangling"));
        r.sandbox->checkpoint(QStringLiteral("base"));
        r.baseDigest = digestOf(r.hostWs);
        AgentConfig config;
        config.sandbox = r.sandbox;
        config.sandboxMode = SandboxMode::Sandbox;
        r.agent = Agent::create(QStringLiteral("a-") + name, config);
        m_remotes.emplace(name, std::move(r));
    }

    QTemporaryDir m_tmp;
    test::SshServer m_sshd;
    std::unique_ptr<test::FakeDaytona> m_daytona;
    std::unique_ptr<test::FakeAgentCore> m_agentCore;
    std::map<QString, Remote> m_remotes;
    QString m_sshSkip;

private Q_SLOTS:
    void initTestCase()
    {
        QLoggingCategory::setFilterRules(QStringLiteral("elsai.*=false"));
        if (m_sshd.start()) {
            auto ssh = m_sshd.makeBackend(QStringLiteral("ckpt"));
            add(QStringLiteral("ssh"), ssh,
                [this] { return m_sshd.remoteRoot() + QStringLiteral("/ckpt"); });
        } else {
            m_sshSkip = m_sshd.error();
        }
        m_daytona = std::make_unique<test::FakeDaytona>();
        auto daytona =
            std::make_shared<DaytonaSandboxBackend>(QStringLiteral("ckpt"), m_daytona->options());
        add(QStringLiteral("daytona"), daytona, [daytona] { return daytona->remoteRoot(); });
        m_agentCore = std::make_unique<test::FakeAgentCore>();
        auto agentCore = std::make_shared<aws::AgentCoreSandboxBackend>(QStringLiteral("ckpt"),
                                                                        m_agentCore->options());
        add(QStringLiteral("agentcore"), agentCore,
            [this, agentCore] { return m_agentCore->sessionFolder(agentCore->sessionId()); });
    }

    void cleanupTestCase()
    {
        for (auto &[name, r] : m_remotes) {
            r.agent.reset();
            // a read-only folder must not stop the fakes' removal of their folders
            QProcess::execute(QStringLiteral("chmod"),
                              {QStringLiteral("-R"), QStringLiteral("u+rwx"), r.hostWs});
            r.sandbox->stop(false);
        }
        m_remotes.clear();
    }

    /// The checkpoint taken by the remote listing and archive is the tree a local walk sees.
    /// Every backend; the cases that add no transport path of their own run on SSH and
    /// Daytona only (stdin and an upload).
    void backends_data(bool all = true)
    {
        QTest::addColumn<QString>("backend");
        QTest::newRow("ssh") << QStringLiteral("ssh");
        QTest::newRow("daytona") << QStringLiteral("daytona");
        if (all)
            QTest::newRow("agentcore") << QStringLiteral("agentcore");
    }
    void captureMatchesLocalWalk_data() { backends_data(); }
    void captureMatchesLocalWalk()
    {
        FETCH_REMOTE(r)
        const TreeManifest base = r->sandbox->timeTravel()->manifest(QStringLiteral("base"));
        QCOMPARE(treeDigest(base), r->baseDigest);
        QVERIFY(base.find("odd\tname\\x"));
        QCOMPARE(base.find("abs-link")->target, QByteArray("/etc/passwd"));
        QCOMPARE(base.find("ro")->mode, 0555u);
        // a capture with no store and no cache (what fork and a diff against "now" take)
        QCOMPARE(treeDigest(r->sandbox->backend()->captureTree({})), r->baseDigest);
    }

    /// Shell changes of every kind, each call's own: a sequence of calls on one workspace
    /// (one SSH channel costs what a few local calls do), then back to the checkpoint.
    void changesPerCall_data() { backends_data(); }
    void changesPerCall()
    {
        FETCH_REMOTE(r)
        struct Step
        {
            const char *command;
            QStringList added, modified, deleted;
        };
        const auto l = [](std::initializer_list<const char *> s) {
            QStringList out;
            for (const char *x : s)
                out.append(QString::fromLatin1(x));
            return out;
        };
        // clang-format off
        const Step steps[] = {
            {"sed -i s/a/b/ notes.txt && echo x >> data.bin && chmod 700 src/main.py",
             l({}), l({"data.bin", "notes.txt", "src/main.py"}), l({})},
            {"ln -s notes.txt l && mkdir -p a/b/c", l({"a", "a/b", "a/b/c", "l"}), l({}), l({})},
            {"mv src/lib src/x", l({"src/x", "src/x/util.py"}), l({}), l({"src/lib", "src/lib/util.py"})},
            {"rm -r src && rm notes.txt && mkdir notes.txt", l({"notes.txt"}), l({}),
             l({"notes.txt", "src", "src/main.py", "src/x", "src/x/util.py"})},
        };
        // clang-format on
        for (const Step &step : steps) {
            const ToolResult res = r->agent->callTool(
                QStringLiteral("execute"),
                {{QStringLiteral("command"), QString::fromLatin1(step.command)}});
            QCOMPARE(res.data.value(QStringLiteral("exit_code")).toInt(), 0);
            const QJsonObject c = res.data.value(QStringLiteral("changes")).toObject();
            const QJsonObject paths = c.value(QStringLiteral("paths")).toObject();
            QCOMPARE(strings(paths.value(QStringLiteral("added"))), step.added);
            QCOMPARE(strings(paths.value(QStringLiteral("modified"))), step.modified);
            QCOMPARE(strings(paths.value(QStringLiteral("deleted"))), step.deleted);
            QCOMPARE(c.value(QStringLiteral("symlinks")).toInt(),
                     step.added.contains(u"l") ? 1 : 0);
            QCOMPARE(c.value(QStringLiteral("attribution")).toString(),
                     QStringLiteral("exclusive"));
        }
        // back to the checkpoint, byte for byte and mode for mode; the restore is nobody's
        // call, and a call that changes nothing reports nothing
        r->sandbox->restore(QStringLiteral("base"));
        QCOMPARE(digestOf(r->hostWs), r->baseDigest);
        const ToolResult quiet =
            r->agent->callTool(QStringLiteral("execute"),
                               {{QStringLiteral("command"), QStringLiteral("cat notes.txt")}});
        const QJsonObject c = quiet.data.value(QStringLiteral("changes")).toObject();
        QCOMPARE(c.value(QStringLiteral("added")).toInt() +
                     c.value(QStringLiteral("modified")).toInt() +
                     c.value(QStringLiteral("deleted")).toInt(),
                 0);
    }

    void restoreExact_data() { backends_data(); }
    void restoreExact()
    {
        FETCH_REMOTE(r)
        // and a folder the restore writes into replaced by a link to a folder outside
        QTemporaryDir outside;
        sh(r->hostWs,
           QStringLiteral("sed -i s/hello/bye/ src/main.py; echo more >> notes.txt; "
                          "chmod 700 data.bin; ln -s notes.txt newlink; mv src/lib src/library; "
                          "mkdir -p a/b/c; rm -r empty && echo file > empty; "
                          "rm link && mkdir link; rm dangling && ln -s elsewhere dangling; "
                          "chmod 700 ro && rm ro/in && chmod 500 ro; printf '\\0\\0' > new.bin; "
                          "rm 'odd\tname\\x'; rm -r src && ln -s '%1' src")
               .arg(outside.path()));
        QVERIFY(digestOf(r->hostWs) != r->baseDigest);
        const RestoreResult res = r->sandbox->restore(QStringLiteral("base"));
        QCOMPARE(digestOf(r->hostWs), r->baseDigest);
        QCOMPARE(QDir(outside.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot),
                 QStringList()); // written into a folder made again, never through the link
        QVERIFY(res.applied.written > 0 && res.applied.removed > 0 && res.applied.linked > 0 &&
                res.applied.created > 0 && res.applied.modes > 0);
        QCOMPARE(test::readHostFile(r->hostWs + QStringLiteral("/src/main.py")),
                 QByteArray("print('hello')\n"));
        // the recorded mtime comes back too; restoring the state it is in changes nothing
        const RestoreResult again = r->sandbox->restore(QStringLiteral("base"));
        QCOMPARE(again.applied.written + again.applied.removed + again.applied.modes +
                     again.applied.linked,
                 qint64(0));
    }

    /// The `manifest` operation hashes only what changed after the time it is given (the
    /// previous capture's start): the script itself, run here on a workspace folder.
    void listingHashesOnlyWhatChanged()
    {
        Remote *r = remote(QStringLiteral("daytona"));
        QVERIFY(r);
        const auto hashes = [&](const QString &since) {
            QProcess p;
            p.start(QStringLiteral("/bin/sh"),
                    {QStringLiteral("-c"),
                     remote::confinedScript(remote::Channel::Binary, r->hostWs,
                                            QStringLiteral("manifest"), QString(), {since})});
            p.waitForFinished(30000);
            const QByteArray out = p.readAllStandardOutput();
            return out.left(out.indexOf(QByteArray("\0L\0", 3))).count("  ./");
        };
        QCOMPARE(hashes(QStringLiteral("0")), 6); // every file
        const QString later = QString::number(QDateTime::currentSecsSinceEpoch() + 1000);
        QCOMPARE(hashes(later), 0);
        QCOMPARE(hashes(QStringLiteral("-")), 0); // the watch's listing: metadata only
        sh(r->hostWs, QStringLiteral("touch -d '+2000 seconds' notes.txt"));
        QCOMPARE(hashes(later), 1);
        r->sandbox->restore(QStringLiteral("base"));
        QCOMPARE(digestOf(r->hostWs), r->baseDigest);
    }

    /// A second checkpoint after a change moves only the changed content into the store.
    void incremental_data() { backends_data(false); }
    void incremental()
    {
        FETCH_REMOTE(r)
        const auto tt = r->sandbox->timeTravel();
        const qint64 before = tt->store().bytesAdded();
        const QByteArray fresh = "changed in " + backend.toUtf8() + '\n';
        test::writeHostFile(r->hostWs + QStringLiteral("/notes.txt"), fresh);
        r->sandbox->checkpoint(QStringLiteral("inc-") + backend);
        QCOMPARE(tt->store().bytesAdded() - before, qint64(fresh.size()));
        const CheckpointDiff d =
            r->sandbox->diffCheckpoints(QStringLiteral("base"), QStringLiteral("inc-") + backend);
        QCOMPARE(d.modified, qint64(1));
        QVERIFY(d.entries.value(0).diff.contains(QLatin1String("+changed in")));
        r->sandbox->restore(QStringLiteral("base"));
        QCOMPARE(digestOf(r->hostWs), r->baseDigest);
    }

    /// A restore cut off half-way (the transfer killed after some steps ran): the journal
    /// names it, the next restore finishes it, and the leftovers of the cut one go.
    void interruptedRestore_data() { backends_data(false); }
    void interruptedRestore()
    {
        FETCH_REMOTE(r)
        CheckpointSpace(CheckpointStore::open(m_tmp.path() + QStringLiteral("/store")),
                        r->sandbox->backend()->id())
            .writeJournal(QStringLiteral("base"));
        // what the cut restore left: some steps done, its staging folder and a temp file
        sh(r->hostWs, QStringLiteral("rm -r src && echo half > notes.txt && "
                                     "mkdir .restore.elsai-tmp-0123456789ab && "
                                     "echo staged > .restore.elsai-tmp-0123456789ab/0 && "
                                     "echo part > .r.elsai-tmp-abcdef012345"));
        QCOMPARE(r->sandbox->interruptedRestore(), std::optional<QString>(QStringLiteral("base")));
        QVERIFY_THROWS_EXCEPTION(PermissionError,
                                 r->sandbox->deleteCheckpoint(QStringLiteral("base")));
        const RestoreResult res = r->sandbox->restore(QStringLiteral("base"));
        QVERIFY(res.wasInterrupted);
        QCOMPARE(r->sandbox->interruptedRestore(), std::nullopt);
        QVERIFY(!QFileInfo::exists(r->hostWs + QStringLiteral("/.restore.elsai-tmp-0123456789ab")));
        QFile::remove(r->hostWs + QStringLiteral("/.r.elsai-tmp-abcdef012345")); // not a change
        QCOMPARE(digestOf(r->hostWs), r->baseDigest);
    }

    /// The transfer cut off for real: the tar arrived, the connection of the command that
    /// applies it dropped. The journal stays; the next restore finishes and clears up.
    void cutOffRestoreIsFinished()
    {
        Remote *r = remote(QStringLiteral("daytona"));
        QVERIFY(r);
        sh(r->hostWs, QStringLiteral("rm -r src && echo half > notes.txt"));
        m_daytona->setInterceptor([](const test::FakeHttpServer::Request &q)
                                      -> std::optional<test::FakeHttpServer::Response> {
            if (!q.path().endsWith(QLatin1String("/process/execute")) ||
                !q.body.contains("'apply'"))
                return std::nullopt;
            test::FakeHttpServer::Response cut;
            cut.dropConnection = true;
            return cut;
        });
        QVERIFY_THROWS_EXCEPTION(SandboxError, r->sandbox->restore(QStringLiteral("base")));
        m_daytona->setInterceptor({});
        QCOMPARE(r->sandbox->interruptedRestore(), std::optional<QString>(QStringLiteral("base")));
        QVERIFY(digestOf(r->hostWs) != r->baseDigest);
        const auto leftovers = [r] {
            return QDir(r->hostWs).entryList({QStringLiteral(".restore.elsai-tmp-*")},
                                             QDir::AllEntries | QDir::Hidden | QDir::System);
        };
        QCOMPARE(leftovers().size(), 1); // the tar that arrived, out of every listing
        const RestoreResult res = r->sandbox->restore(QStringLiteral("base"));
        QVERIFY(res.wasInterrupted);
        QCOMPARE(digestOf(r->hostWs), r->baseDigest);
        QCOMPARE(leftovers(), QStringList());
    }
};

QTEST_GUILESS_MAIN(TestRemoteCheckpoints)
#include "tst_remotecheckpoints.moc"
