// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "diffview.h"
#include "errors.h"
#include "flushpreviewdialog.h"
#include "newsandboxdialog.h"
#include "sandboxcontroller.h"
#include "testutil.h"
#include "types.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QtTest>

#include <sys/stat.h>
#include <unistd.h>

using namespace elsai;
using test::readHostFile;
using test::writeHostFile;

/// Unsets the named variables for the test and restores their values afterwards.
class EnvGuard
{
public:
    explicit EnvGuard(std::initializer_list<const char *> names)
    {
        for (const char *name : names) {
            m_saved.append({name, qgetenv(name), qEnvironmentVariableIsSet(name)});
            qunsetenv(name);
        }
    }
    ~EnvGuard()
    {
        for (const Saved &s : m_saved) {
            if (s.wasSet)
                qputenv(s.name, s.value);
            else
                qunsetenv(s.name);
        }
    }

private:
    struct Saved
    {
        const char *name;
        QByteArray value;
        bool wasSet;
    };
    QList<Saved> m_saved;
};

class TestDialogs : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;

    static QTreeWidgetItem *group(QTreeWidget *tree, const QString &prefix)
    {
        for (int i = 0; i < tree->topLevelItemCount(); ++i) {
            if (tree->topLevelItem(i)->text(0).startsWith(prefix))
                return tree->topLevelItem(i);
        }
        return nullptr;
    }
    static QTreeWidgetItem *child(QTreeWidgetItem *group, const QString &text)
    {
        for (int i = 0; group && i < group->childCount(); ++i) {
            if (group->child(i)->text(0) == text)
                return group->child(i);
        }
        return nullptr;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_tmp.isValid());
    }

    void newSandboxDefaultsMatchTheSpec()
    {
        NewSandboxDialog dialog;
        const SandboxSpec defaults;
        QCOMPARE(dialog.findChild<QLineEdit *>(QStringLiteral("workspaceId"))->text(),
                 defaults.workspaceId);
        QCOMPARE(dialog.findChild<QDoubleSpinBox *>(QStringLiteral("timeout"))->value(), 120.0);
        QCOMPARE(dialog.findChild<QSpinBox *>(QStringLiteral("maxOutputBytes"))->value(), 100000);
        QVERIFY(dialog.findChild<QCheckBox *>(QStringLiteral("inheritEnv"))->isChecked());
        QCOMPARE(dialog.findChild<QDoubleSpinBox *>(QStringLiteral("ttl"))->value(), 7200.0);
        QVERIFY(!dialog.findChild<QCheckBox *>(QStringLiteral("noTtl"))->isChecked());
        QCOMPARE(dialog.seedExcludes(), DEFAULT_SANDBOX_SEED_EXCLUDES);
        QCOMPARE(dialog.syncIncludes(), DEFAULT_SANDBOX_SYNC_INCLUDE);

        const SandboxSpec s = dialog.spec();
        QCOMPARE(s.workspaceId, defaults.workspaceId);
        QCOMPARE(s.backend, defaults.backend);
        QVERIFY(s.seedExclude.isEmpty());    // defaults are implied, not repeated
        QVERIFY(!s.syncInclude.has_value()); // the default list = none
        QVERIFY(!s.seedFrom && !s.syncDest);
        QCOMPARE(s.ttlSeconds, defaults.ttlSeconds);
        QCOMPARE(s.local.timeout, defaults.local.timeout);
        QCOMPARE(s.local.maxOutputBytes, defaults.local.maxOutputBytes);
        QCOMPARE(s.local.inheritEnv, defaults.local.inheritEnv);
        QCOMPARE(s.local.killGraceMs, defaults.local.killGraceMs);
        QVERIFY(s.local.env.isEmpty());
    }

    void newSandboxSpecRoundTrips()
    {
        SandboxSpec in;
        in.workspaceId = QStringLiteral("round");
        in.workspaceRoot = QStringLiteral("/tmp/ws-round");
        in.seedFrom = m_tmp.path(); // an existing folder: a missing one is refused
        in.seedExclude = {QStringLiteral("*.log"), QStringLiteral("build/")};
        in.syncInclude = QStringList{QStringLiteral("src/**"), QStringLiteral("docs/*.md")};
        in.syncDest = QStringLiteral("/tmp/out");
        in.ttlSeconds = std::nullopt;
        in.local.timeout = 30;
        in.local.maxOutputBytes = 5000;
        in.local.inheritEnv = false;
        in.local.killGraceMs = 250;
        in.local.env = {{QStringLiteral("A"), QStringLiteral("1")},
                        {QStringLiteral("B"), QStringLiteral("x=y")}};
        NewSandboxDialog dialog;
        dialog.setSpec(in);
        const SandboxSpec out = dialog.spec();
        QCOMPARE(out.workspaceId, in.workspaceId);
        QCOMPARE(out.workspaceRoot, in.workspaceRoot);
        QCOMPARE(out.seedFrom, in.seedFrom);
        QCOMPARE(out.seedExclude, in.seedExclude);
        QCOMPARE(out.syncInclude, in.syncInclude);
        QCOMPARE(out.syncDest, in.syncDest);
        QVERIFY(!out.ttlSeconds.has_value());
        QCOMPARE(out.local.timeout, 30.0);
        QCOMPARE(out.local.maxOutputBytes, qint64(5000));
        QCOMPARE(out.local.inheritEnv, false);
        QCOMPARE(out.local.killGraceMs, 250);
        QCOMPARE(out.local.env, in.local.env);
        // The defaults stay listed (locked) in front of the extras.
        QCOMPARE(dialog.seedExcludes(), DEFAULT_SANDBOX_SEED_EXCLUDES + in.seedExclude);
    }

    void defaultExcludesAreLocked()
    {
        NewSandboxDialog dialog;
        auto *list = dialog.findChild<QListWidget *>(QStringLiteral("seedExcludes"));
        QVERIFY(list);
        QListWidgetItem *git = list->item(0);
        QCOMPARE(git->text(), QStringLiteral(".git"));
        QVERIFY(!(git->flags() & Qt::ItemIsEditable));
        // "Remove" ignores locked rows.
        git->setSelected(true);
        const auto buttons = list->parentWidget()->findChildren<QPushButton *>();
        QPushButton *remove = nullptr;
        for (QPushButton *b : buttons) {
            if (b->text() == QStringLiteral("Remove"))
                remove = b;
        }
        QVERIFY(remove);
        QVERIFY(!remove->isEnabled());
        dialog.addSeedExclude(QStringLiteral("*.tmp"));
        list->clearSelection();
        list->item(list->count() - 1)->setSelected(true);
        QVERIFY(remove->isEnabled());
        remove->click();
        QCOMPARE(dialog.seedExcludes(), DEFAULT_SANDBOX_SEED_EXCLUDES);

        // Sync includes may drop a default: the spec then carries the full list.
        auto *includes = dialog.findChild<QListWidget *>(QStringLiteral("syncIncludes"));
        delete includes->item(0); // src/**
        QCOMPARE(dialog.spec().syncInclude, DEFAULT_SANDBOX_SYNC_INCLUDE.mid(1));
    }

    void okNeedsWorkspaceIdAndValidInput()
    {
        NewSandboxDialog dialog;
        QPushButton *ok = dialog.findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok);
        QVERIFY(ok->isEnabled());
        auto *id = dialog.findChild<QLineEdit *>(QStringLiteral("workspaceId"));
        id->setText(QStringLiteral("  "));
        QVERIFY(!ok->isEnabled());
        QVERIFY_THROWS_EXCEPTION(SandboxError, dialog.spec());
        id->setText(QStringLiteral("w"));
        QVERIFY(ok->isEnabled());
        dialog.addSyncInclude(QStringLiteral("[unclosed"));
        QVERIFY_THROWS_EXCEPTION(SandboxError, dialog.spec());
    }

    // ---- per-backend settings ---------------------------------------------------------------

    void choosingABackendShowsItsPage_data()
    {
        QTest::addColumn<QString>("backend");
        QTest::addColumn<bool>("hostFolder");
        QTest::addColumn<bool>("inheritEnv");
        for (const QString &b : SandboxSpec::availableBackends()) {
            const bool host = b == QLatin1String("local") || b == QLatin1String("bwrap");
            QTest::newRow(qPrintable(b)) << b << host << (b == QLatin1String("local"));
        }
    }

    void choosingABackendShowsItsPage()
    {
        QFETCH(QString, backend);
        QFETCH(bool, hostFolder);
        QFETCH(bool, inheritEnv);
        NewSandboxDialog dialog;
        auto *combo = dialog.findChild<QComboBox *>(QStringLiteral("backend"));
        auto *pages = dialog.findChild<QStackedWidget *>(QStringLiteral("backendPages"));
        QVERIFY(combo && pages);
        QCOMPARE(pages->currentWidget()->objectName(), QStringLiteral("page_local"));
        combo->setCurrentText(backend);
        QCOMPARE(pages->currentWidget()->objectName(), QStringLiteral("page_") + backend);
        // Fields that do not apply to the backend are disabled.
        QCOMPARE(dialog.findChild<QLineEdit *>(QStringLiteral("workspaceRoot"))->isEnabled(),
                 hostFolder);
        QCOMPARE(dialog.findChild<QCheckBox *>(QStringLiteral("inheritEnv"))->isEnabled(),
                 inheritEnv);
        // The seed preview keeps working whatever the backend.
        const QString project = m_tmp.filePath(QStringLiteral("preview-") + backend);
        writeHostFile(project + QStringLiteral("/a.txt"), "a\n");
        dialog.findChild<QLineEdit *>(QStringLiteral("seedFrom"))->setText(project);
        QSignalSpy ready(&dialog, &NewSandboxDialog::seedPreviewReady);
        dialog.runSeedPreview();
        QTRY_COMPARE(ready.size(), 1);
        QVERIFY(
            child(group(dialog.seedPreview(), QStringLiteral("To copy")), QStringLiteral("a.txt")));
    }

    void remoteBackendsLeaveTheWorkspaceRootToTheBackend()
    {
        SandboxSpec in;
        in.backend = QStringLiteral("ssh");
        in.ssh.host = QStringLiteral("build.example");
        in.workspaceRoot = QStringLiteral("/home/me/typed-before");
        NewSandboxDialog dialog;
        dialog.setSpec(in);
        QVERIFY(dialog.spec().workspaceRoot.isEmpty()); // createBackend() names it
        dialog.findChild<QComboBox *>(QStringLiteral("backend"))
            ->setCurrentText(QStringLiteral("local"));
        QCOMPARE(dialog.spec().workspaceRoot, in.workspaceRoot);
    }

    // Only the chosen backend's page is read: a half-filled page of another backend neither
    // blocks Create nor leaks into the spec.
    void otherBackendsPagesAreNotRead()
    {
        SandboxSpec in;
        in.backend = QStringLiteral("bwrap");
        in.ssh.host = QStringLiteral("kept.example");
        NewSandboxDialog dialog;
        dialog.setSpec(in);
        dialog.findChild<QLineEdit *>(QStringLiteral("daytonaApiUrl"))
            ->setText(QStringLiteral("not a url"));
        dialog.findChild<QLineEdit *>(QStringLiteral("sshHost"))
            ->setText(QStringLiteral("typed.example"));
        QVERIFY(dialog.findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok)->isEnabled());
        const SandboxSpec out = dialog.spec();
        QCOMPARE(out.backend, QStringLiteral("bwrap"));
        QCOMPARE(out.ssh.host, QStringLiteral("kept.example"));
        QCOMPARE(out.daytona.config.apiUrl, in.daytona.config.apiUrl);
        // An emptied byte limit is an error naming the field, not a silent 0 (= unlimited).
        dialog.findChild<QLineEdit *>(QStringLiteral("bwrapMaxMemoryBytes"))->clear();
        try {
            (void)dialog.spec();
            QFAIL("an empty memory limit was accepted");
        } catch (const ValueError &e) {
            QVERIFY2(e.message().contains(QStringLiteral("memory")), qPrintable(e.message()));
        }
    }

    void bwrapFieldsRoundTrip()
    {
        SandboxSpec in;
        in.backend = QStringLiteral("bwrap");
        in.bwrap.network = true;
        in.bwrap.maxProcesses = 77;
        in.bwrap.maxFileSizeBytes = (qint64(5) << 30) + 3; // beyond an int
        in.bwrap.maxMemoryBytes = 0;
        in.bwrap.readOnlyBinds = {QStringLiteral("/opt/tool"), QStringLiteral("/srv/data")};
        in.bwrap.bwrapPath = QStringLiteral("/usr/local/bin/bwrap");
        in.bwrap.pidsCgroup = false;
        NewSandboxDialog dialog;
        dialog.setSpec(in);
        QVERIFY(dialog.findChild<QCheckBox *>(QStringLiteral("bwrapNetwork"))->isChecked());
        QCOMPARE(dialog.findChild<QSpinBox *>(QStringLiteral("bwrapMaxProcesses"))->value(), 77);
        const SandboxSpec out = dialog.spec();
        QCOMPARE(out.backend, in.backend);
        QCOMPARE(out.bwrap.network, true);
        QCOMPARE(out.bwrap.maxProcesses, 77);
        QCOMPARE(out.bwrap.maxFileSizeBytes, in.bwrap.maxFileSizeBytes);
        QCOMPARE(out.bwrap.maxMemoryBytes, qint64(0));
        QCOMPARE(out.bwrap.readOnlyBinds, in.bwrap.readOnlyBinds);
        QCOMPARE(out.bwrap.bwrapPath, in.bwrap.bwrapPath);
        QCOMPARE(out.bwrap.pidsCgroup, false);

        // Defaults shown are the backend's.
        NewSandboxDialog fresh;
        fresh.findChild<QComboBox *>(QStringLiteral("backend"))
            ->setCurrentText(QStringLiteral("bwrap"));
        const BwrapSandboxBackend::Options defaults;
        QCOMPARE(fresh.findChild<QLineEdit *>(QStringLiteral("bwrapMaxMemoryBytes"))->text(),
                 QString::number(defaults.maxMemoryBytes));
        QCOMPARE(fresh.spec().bwrap.maxProcesses, defaults.maxProcesses);
        QVERIFY(!fresh.spec().bwrap.network);

        // A relative bind is refused with a message naming it.
        dialog.findChild<QPlainTextEdit *>(QStringLiteral("bwrapReadOnlyBinds"))
            ->setPlainText(QStringLiteral("opt/tool"));
        try {
            (void)dialog.spec();
            QFAIL("a relative bind was accepted");
        } catch (const ValueError &e) {
            QVERIFY2(e.message().contains(QStringLiteral("opt/tool")), qPrintable(e.message()));
        }
    }

    void sshFieldsRoundTrip()
    {
        SandboxSpec in;
        in.backend = QStringLiteral("ssh");
        in.ssh.host = QStringLiteral("build.example");
        in.ssh.port = 2222;
        in.ssh.user = QStringLiteral("ci");
        in.ssh.identityFile = QStringLiteral("/home/me/.ssh/id_ci");
        in.ssh.knownHostsFile = QStringLiteral("/home/me/.ssh/ci_hosts");
        in.ssh.connectTimeoutSeconds = 17;
        in.ssh.sshProgram = QStringLiteral("/opt/ssh/bin/ssh"); // not shown: kept
        in.sshRemoteRoot = QStringLiteral("/srv/ws");
        NewSandboxDialog dialog;
        dialog.setSpec(in);
        QCOMPARE(dialog.findChild<QLineEdit *>(QStringLiteral("sshHost"))->text(), in.ssh.host);
        QVERIFY(dialog.findChild<QPushButton *>(QStringLiteral("sshIdentityBrowse")));
        const SandboxSpec out = dialog.spec();
        QCOMPARE(out.ssh.host, in.ssh.host);
        QCOMPARE(out.ssh.port, 2222);
        QCOMPARE(out.ssh.user, in.ssh.user);
        QCOMPARE(out.ssh.identityFile, in.ssh.identityFile);
        QCOMPARE(out.ssh.knownHostsFile, in.ssh.knownHostsFile);
        QCOMPARE(out.ssh.connectTimeoutSeconds, 17);
        QCOMPARE(out.ssh.sshProgram, in.ssh.sshProgram);
        QCOMPARE(out.sshRemoteRoot, in.sshRemoteRoot);
    }

    void missingSshHostBlocksOk()
    {
        NewSandboxDialog dialog;
        QPushButton *ok = dialog.findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok);
        QVERIFY(ok->isEnabled());
        QVERIFY(dialog.validationMessage().isEmpty());
        dialog.findChild<QComboBox *>(QStringLiteral("backend"))
            ->setCurrentText(QStringLiteral("ssh"));
        QVERIFY(!ok->isEnabled());
        QVERIFY2(dialog.validationMessage().contains(QStringLiteral("host")),
                 qPrintable(dialog.validationMessage()));
        QVERIFY(!dialog.findChild<QLabel *>(QStringLiteral("validationMessage"))->isHidden());
        QVERIFY_THROWS_EXCEPTION(ValueError, dialog.spec());
        // accept() (Enter) refuses too, and the dialog stays open with the message.
        dialog.show();
        dialog.accept();
        QVERIFY(dialog.isVisible());
        QCOMPARE(dialog.result(), int(QDialog::Rejected));

        QTest::keyClicks(dialog.findChild<QLineEdit *>(QStringLiteral("sshHost")),
                         QStringLiteral("h"));
        QVERIFY(ok->isEnabled());
        QVERIFY(dialog.validationMessage().isEmpty());
        // Back to local: the ssh page's needs no longer apply.
        dialog.findChild<QLineEdit *>(QStringLiteral("sshHost"))->clear();
        QVERIFY(!ok->isEnabled());
        dialog.findChild<QComboBox *>(QStringLiteral("backend"))
            ->setCurrentText(QStringLiteral("local"));
        QVERIFY(ok->isEnabled());
        dialog.reject();
    }

    void daytonaFieldsRoundTrip()
    {
        const EnvGuard guard({"DAYTONA_API_KEY", "DAYTONA_JWT_TOKEN", "DAYTONA_API_URL",
                              "DAYTONA_SERVER_URL", "DAYTONA_TARGET", "DAYTONA_ORGANIZATION_ID"});
        SandboxSpec in;
        in.backend = QStringLiteral("daytona");
        in.daytona.config.apiUrl = QUrl(QStringLiteral("http://127.0.0.1:3000/api"));
        in.daytona.config.apiKey = QStringLiteral("dtn_typed");
        in.daytona.config.target = QStringLiteral("eu");
        in.daytona.config.organizationId = QStringLiteral("org-1");
        in.daytona.snapshot = QStringLiteral("py-3.12");
        in.daytona.name = QStringLiteral("mine");
        in.daytona.autoStopMinutes = 0;
        in.daytona.deleteOnClose = false;
        in.daytona.existingSandbox = QStringLiteral("sb-42");
        in.daytona.remoteRoot = QStringLiteral("/home/daytona/ws");
        in.daytona.labels = {{QStringLiteral("team"), QStringLiteral("x")}}; // not shown: kept
        NewSandboxDialog dialog;
        dialog.setSpec(in);
        const SandboxSpec out = dialog.spec();
        QCOMPARE(out.daytona.config.apiUrl, in.daytona.config.apiUrl);
        QCOMPARE(out.daytona.config.apiKey, in.daytona.config.apiKey);
        QCOMPARE(out.daytona.config.target, in.daytona.config.target);
        QCOMPARE(out.daytona.config.organizationId, in.daytona.config.organizationId);
        QCOMPARE(out.daytona.snapshot, in.daytona.snapshot);
        QCOMPARE(out.daytona.name, in.daytona.name);
        QCOMPARE(out.daytona.autoStopMinutes, 0);
        QCOMPARE(out.daytona.deleteOnClose, false);
        QCOMPARE(out.daytona.existingSandbox, in.daytona.existingSandbox);
        QCOMPARE(out.daytona.remoteRoot, in.daytona.remoteRoot);
        QCOMPARE(out.daytona.labels, in.daytona.labels);
        auto *key = dialog.findChild<QLineEdit *>(QStringLiteral("daytonaApiKey"));
        QCOMPARE(key->echoMode(), QLineEdit::Password);
        QVERIFY(dialog.findChild<QLabel *>(QStringLiteral("daytonaApiKeySource"))
                    ->text()
                    .isEmpty()); // typed, not from the environment

        // No key at all: OK is blocked with a message naming the variable.
        key->clear();
        QVERIFY(!dialog.findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok)->isEnabled());
        QVERIFY2(dialog.validationMessage().contains(QStringLiteral("DAYTONA_API_KEY")),
                 qPrintable(dialog.validationMessage()));
        key->setText(QStringLiteral("k"));
        dialog.findChild<QLineEdit *>(QStringLiteral("daytonaApiUrl"))
            ->setText(QStringLiteral("not a url"));
        QVERIFY_THROWS_EXCEPTION(ValueError, dialog.spec());
    }

    void daytonaDefaultsComeFromTheEnvironment()
    {
        const EnvGuard guard(
            {"DAYTONA_API_KEY", "DAYTONA_API_URL", "DAYTONA_TARGET", "DAYTONA_SERVER_URL"});
        qputenv("DAYTONA_API_KEY", "dtn_from_env_secret");
        qputenv("DAYTONA_API_URL", "http://127.0.0.1:9/api");
        qputenv("DAYTONA_TARGET", "us");
        NewSandboxDialog dialog;
        dialog.findChild<QComboBox *>(QStringLiteral("backend"))
            ->setCurrentText(QStringLiteral("daytona"));
        auto *key = dialog.findChild<QLineEdit *>(QStringLiteral("daytonaApiKey"));
        QCOMPARE(key->text(), QStringLiteral("dtn_from_env_secret"));
        QCOMPARE(key->echoMode(), QLineEdit::Password);
        QVERIFY(!key->displayText().contains(QStringLiteral("dtn_")));
        QCOMPARE(dialog.findChild<QLabel *>(QStringLiteral("daytonaApiKeySource"))->text(),
                 QStringLiteral("from DAYTONA_API_KEY"));
        QCOMPARE(dialog.findChild<QLineEdit *>(QStringLiteral("daytonaApiUrl"))->text(),
                 QStringLiteral("http://127.0.0.1:9/api"));
        QCOMPARE(dialog.findChild<QLabel *>(QStringLiteral("daytonaApiUrlSource"))->text(),
                 QStringLiteral("from DAYTONA_API_URL"));
        QCOMPARE(dialog.findChild<QLineEdit *>(QStringLiteral("daytonaTarget"))->text(),
                 QStringLiteral("us"));
        // No secret in any visible text of the dialog.
        for (QLabel *label : dialog.findChildren<QLabel *>())
            QVERIFY2(!label->text().contains(QStringLiteral("dtn_from_env")),
                     qPrintable(label->objectName()));
        QCOMPARE(dialog.spec().daytona.config.apiKey, QStringLiteral("dtn_from_env_secret"));
        // Typing over it: the note no longer claims the environment.
        key->setText(QStringLiteral("other"));
        QVERIFY(
            dialog.findChild<QLabel *>(QStringLiteral("daytonaApiKeySource"))->text().isEmpty());
    }

    void agentcoreFieldsRoundTrip()
    {
        const EnvGuard guard({"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID",
                              "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN",
                              "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_BEDROCK_AGENTCORE"});
        SandboxSpec in;
        in.backend = QStringLiteral("agentcore");
        in.agentcore.region = QStringLiteral("eu-west-1");
        in.agentcore.endpoint = QUrl(QStringLiteral("http://127.0.0.1:4566"));
        in.agentcore.credentials = {QStringLiteral("AKIDTYPED"), QStringLiteral("typedsecret"),
                                    QStringLiteral("typedtoken")};
        in.agentcore.codeInterpreterId = QStringLiteral("custom.ci-1");
        in.agentcore.sessionTimeoutSeconds = 1800;
        in.agentcore.requestTimeoutMs = 1234; // not shown: kept
        NewSandboxDialog dialog;
        dialog.setSpec(in);
        const SandboxSpec out = dialog.spec();
        QCOMPARE(out.agentcore.region, in.agentcore.region);
        QCOMPARE(out.agentcore.endpoint, in.agentcore.endpoint);
        QCOMPARE(out.agentcore.credentials.accessKeyId, in.agentcore.credentials.accessKeyId);
        QCOMPARE(out.agentcore.credentials.secretAccessKey,
                 in.agentcore.credentials.secretAccessKey);
        QCOMPARE(out.agentcore.credentials.sessionToken, in.agentcore.credentials.sessionToken);
        QCOMPARE(out.agentcore.codeInterpreterId, in.agentcore.codeInterpreterId);
        QCOMPARE(out.agentcore.sessionTimeoutSeconds, 1800);
        QCOMPARE(out.agentcore.requestTimeoutMs, 1234);
        for (const char *secret : {"awsSecretAccessKey", "awsSessionToken"}) {
            QCOMPARE(dialog.findChild<QLineEdit *>(QLatin1String(secret))->echoMode(),
                     QLineEdit::Password);
        }
        // No environment and no region: OK is blocked, saying what to set.
        dialog.findChild<QLineEdit *>(QStringLiteral("awsRegion"))->clear();
        QVERIFY(!dialog.findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok)->isEnabled());
        QVERIFY2(dialog.validationMessage().contains(QStringLiteral("AWS_REGION")),
                 qPrintable(dialog.validationMessage()));
        QCOMPARE(dialog.findChild<QLabel *>(QStringLiteral("awsRegionSource"))->text(),
                 QStringLiteral("AWS_REGION is not set"));
    }

    void agentcoreDefaultsComeFromTheEnvironment()
    {
        const EnvGuard guard({"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID",
                              "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN",
                              "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_BEDROCK_AGENTCORE"});
        qputenv("AWS_DEFAULT_REGION", "ap-south-1");
        qputenv("AWS_ACCESS_KEY_ID", "AKIDFROMENV");
        qputenv("AWS_SECRET_ACCESS_KEY", "envsecretvalue");
        qputenv("AWS_SESSION_TOKEN", "envtokenvalue");
        qputenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9");
        NewSandboxDialog dialog;
        dialog.findChild<QComboBox *>(QStringLiteral("backend"))
            ->setCurrentText(QStringLiteral("agentcore"));
        auto text = [&](const char *name) {
            return dialog.findChild<QLineEdit *>(QLatin1String(name))->text();
        };
        auto note = [&](const char *name) {
            return dialog.findChild<QLabel *>(QLatin1String(name) + QStringLiteral("Source"))
                ->text();
        };
        QCOMPARE(text("awsRegion"), QStringLiteral("ap-south-1"));
        QCOMPARE(note("awsRegion"), QStringLiteral("from AWS_DEFAULT_REGION"));
        QCOMPARE(text("agentcoreEndpoint"), QStringLiteral("http://127.0.0.1:9"));
        QCOMPARE(note("agentcoreEndpoint"), QStringLiteral("from AWS_ENDPOINT_URL"));
        QCOMPARE(text("awsAccessKeyId"), QStringLiteral("AKIDFROMENV"));
        QCOMPARE(note("awsSecretAccessKey"), QStringLiteral("from AWS_SECRET_ACCESS_KEY"));
        QCOMPARE(note("awsSessionToken"), QStringLiteral("from AWS_SESSION_TOKEN"));
        for (const char *secret : {"awsSecretAccessKey", "awsSessionToken"}) {
            auto *edit = dialog.findChild<QLineEdit *>(QLatin1String(secret));
            QCOMPARE(edit->echoMode(), QLineEdit::Password);
            QVERIFY(!edit->displayText().contains(QStringLiteral("env")));
        }
        QVERIFY(dialog.findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok)->isEnabled());
        const SandboxSpec s = dialog.spec();
        QCOMPARE(s.agentcore.region, QStringLiteral("ap-south-1"));
        QCOMPARE(s.agentcore.credentials.secretAccessKey, QStringLiteral("envsecretvalue"));
    }

    void seedPreviewListsExcludedAndDropped()
    {
        const QString project = m_tmp.filePath(QStringLiteral("preview"));
        writeHostFile(project + QStringLiteral("/src/main.py"), "print(1)\n");
        writeHostFile(project + QStringLiteral("/.git/HEAD"), "ref\n");
        writeHostFile(project + QStringLiteral("/notes.log"), "log\n");
        QVERIFY(::symlink("/etc", qPrintable(project + QStringLiteral("/link"))) == 0);
        QVERIFY(::mkfifo(qPrintable(project + QStringLiteral("/pipe")), 0600) == 0);

        NewSandboxDialog dialog;
        dialog.findChild<QLineEdit *>(QStringLiteral("seedFrom"))->setText(project);
        dialog.addSeedExclude(QStringLiteral("*.log"));
        QSignalSpy ready(&dialog, &NewSandboxDialog::seedPreviewReady);
        dialog.runSeedPreview();
        QTRY_COMPARE(ready.size(), 1);
        QTreeWidget *tree = dialog.seedPreview();
        QTreeWidgetItem *copy = group(tree, QStringLiteral("To copy"));
        QVERIFY(copy);
        QVERIFY2(copy->text(0).startsWith(QStringLiteral("To copy: 1 files")),
                 qPrintable(copy->text(0)));
        QVERIFY(child(copy, QStringLiteral("src/main.py")));
        QTreeWidgetItem *excluded = group(tree, QStringLiteral("Excluded"));
        QTreeWidgetItem *git = child(excluded, QStringLiteral(".git/"));
        QVERIFY(git);
        QCOMPARE(git->text(2), QStringLiteral(".git"));
        QTreeWidgetItem *log = child(excluded, QStringLiteral("notes.log"));
        QVERIFY(log);
        QCOMPARE(log->text(2), QStringLiteral("*.log"));
        QVERIFY(child(group(tree, QStringLiteral("Symlinks dropped")), QStringLiteral("link")));
        QVERIFY(
            child(group(tree, QStringLiteral("Special files dropped")), QStringLiteral("pipe")));
    }

    void flushPreviewShowsAddConflictDiffAndFlushes()
    {
        const QString project = m_tmp.filePath(QStringLiteral("flush-project"));
        writeHostFile(project + QStringLiteral("/app.py"), "x = 1\ny = 2\n");
        writeHostFile(project + QStringLiteral("/same.py"), "same\n");
        SandboxController c;
        SandboxSpec s;
        s.workspaceId = QStringLiteral("flush");
        s.workspaceRoot = m_tmp.filePath(QStringLiteral("flush-ws"));
        s.seedFrom = project;
        c.addSandbox(s);
        QVERIFY(QTest::qWaitFor([&] { return c.state(s.workspaceId) == SessionState::Running; },
                                20000));
        // Both sides change app.py; the workspace gains new.py.
        c.writeFile(s.workspaceId, QStringLiteral("app.py"), "x = 1\ny = 3\n");
        c.writeFile(s.workspaceId, QStringLiteral("new.py"), "print('new')\n");
        c.waitForIdle();
        QTest::qWait(20); // a distinct mtime for the host edit
        writeHostFile(project + QStringLiteral("/app.py"), "x = 10\ny = 2\n");

        FlushPreviewDialog dialog(&c, s.workspaceId);
        QSignalSpy planned(&dialog, &FlushPreviewDialog::planReady);
        QTRY_VERIFY(planned.size() >= 1);
        QTreeWidget *tree = dialog.entriesView();
        QTreeWidgetItem *add = group(tree, QStringLiteral("Add (1)"));
        QVERIFY(add);
        QVERIFY(child(add, QStringLiteral("new.py")));
        QTreeWidgetItem *conflict = group(tree, QStringLiteral("Conflict (1)"));
        QVERIFY2(conflict, qPrintable(tree->topLevelItem(0)->text(0)));
        QTreeWidgetItem *app = child(conflict, QStringLiteral("app.py"));
        QVERIFY(app);
        QVERIFY(group(tree, QStringLiteral("Unchanged (1)")));

        QSignalSpy diffed(&dialog, &FlushPreviewDialog::diffReady);
        tree->setCurrentItem(app);
        QTRY_COMPARE(diffed.size(), 1);
        QCOMPARE(dialog.diffView()->toPlainText(),
                 QStringLiteral("--- host/app.py\n+++ workspace/app.py\n@@ -1,2 +1,2 @@\n"
                                "-x = 10\n-y = 2\n+x = 1\n+y = 3\n"));

        tree->setCurrentItem(child(add, QStringLiteral("new.py")));
        QTRY_COMPARE(diffed.size(), 2);
        QVERIFY(dialog.diffView()->toPlainText().startsWith(QStringLiteral("--- /dev/null\n")));

        QSignalSpy flushed(&dialog, &FlushPreviewDialog::flushFinished);
        dialog.flushNow();
        QTRY_COMPARE(flushed.size(), 1);
        QCOMPARE(readHostFile(project + QStringLiteral("/new.py")), QByteArray("print('new')\n"));
        QCOMPARE(readHostFile(project + QStringLiteral("/app.py")), QByteArray("x = 10\ny = 2\n"));
        QCOMPARE(readHostFile(project + QStringLiteral("/app.py") + conflictSuffix()),
                 QByteArray("x = 1\ny = 3\n"));
        QVERIFY2(dialog.resultText().contains(QStringLiteral("1 file(s) synced")),
                 qPrintable(dialog.resultText()));
        QVERIFY(dialog.resultText().contains(QStringLiteral("app.py")));
        QCOMPARE(flushed.first().at(0).toBool(), false); // a conflict is not a clean flush
    }

    // Deletions on either side have their own groups, a hint instead of a diff, and the
    // sandbox's are named in the result.
    void flushPreviewShowsDeletions()
    {
        const QString project = m_tmp.filePath(QStringLiteral("flush-deletions"));
        writeHostFile(project + QStringLiteral("/host_gone.py"), "h\n");
        writeHostFile(project + QStringLiteral("/ws_gone.py"), "w\n");
        SandboxController c;
        SandboxSpec s;
        s.workspaceId = QStringLiteral("flush-deletions");
        s.workspaceRoot = m_tmp.filePath(QStringLiteral("flush-deletions-ws"));
        s.seedFrom = project;
        c.addSandbox(s);
        QVERIFY(QTest::qWaitFor([&] { return c.state(s.workspaceId) == SessionState::Running; },
                                20000));
        c.deleteFiles(s.workspaceId, {QStringLiteral("ws_gone.py")});
        c.waitForIdle();
        QVERIFY(QFile::remove(project + QStringLiteral("/host_gone.py")));

        FlushPreviewDialog dialog(&c, s.workspaceId);
        QSignalSpy planned(&dialog, &FlushPreviewDialog::planReady);
        QTRY_VERIFY(planned.size() >= 1);
        QTreeWidget *tree = dialog.entriesView();
        QTreeWidgetItem *hostGone = group(tree, QStringLiteral("Deleted on the host (1)"));
        QVERIFY(hostGone);
        QVERIFY(child(hostGone, QStringLiteral("host_gone.py")));
        QTreeWidgetItem *wsGone = group(tree, QStringLiteral("Deleted in the sandbox (1)"));
        QVERIFY(wsGone);
        QTreeWidgetItem *item = child(wsGone, QStringLiteral("ws_gone.py"));
        QVERIFY(item);
        QSignalSpy diffed(&dialog, &FlushPreviewDialog::diffReady);
        tree->setCurrentItem(item);
        QTRY_COMPARE(diffed.size(), 1);
        QVERIFY2(dialog.diffView()->toPlainText().contains(QStringLiteral("host file is kept")),
                 qPrintable(dialog.diffView()->toPlainText()));

        QSignalSpy flushed(&dialog, &FlushPreviewDialog::flushFinished);
        dialog.flushNow();
        QTRY_COMPARE(flushed.size(), 1);
        QVERIFY(!QFileInfo::exists(project + QStringLiteral("/host_gone.py")));
        QCOMPARE(readHostFile(project + QStringLiteral("/ws_gone.py")), QByteArray("w\n"));
        QVERIFY2(dialog.resultText().contains(QStringLiteral("ws_gone.py")),
                 qPrintable(dialog.resultText()));
    }
};

QTEST_MAIN(TestDialogs)
#include "tst_dialogs.moc"
