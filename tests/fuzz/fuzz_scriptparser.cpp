// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// libFuzzer target: the headless script parser and dispatcher (app/scriptrunner.h).
// Each input is a script; every line goes through ScriptRunner::runLine against a started
// sandbox on a scratch workspace. To keep the fuzzer from acting on this machine, commands are
// not run (the backend answers execute with a fixed result) and lines that would touch host
// paths or wait are skipped before the runner sees them: download_files, flush, stop with
// sync, sleep, and add_files with a {"host": …} source. Everything else — malformed JSON,
// wrong types, unknown ops, hostile workspace paths, attach/detach/call — is exercised.
// Every non-empty, non-comment line must produce exactly one result object with "op" and "ok".
#include "localsandboxbackend.h"
#include "sandbox.h"
#include "scriptrunner.h"

#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QTemporaryDir>

#include <cstdint>
#include <cstdlib>
#include <memory>

namespace {

class NoExecBackend : public elsai::LocalSandboxBackend
{
public:
    using LocalSandboxBackend::LocalSandboxBackend;
    elsai::ExecuteResult execute(const QString &command, std::optional<double>, const QString &,
                                 const elsai::ExecuteOptions &) override
    {
        elsai::ExecuteResult r;
        r.output = QStringLiteral("not run: %1 bytes").arg(command.size());
        r.exitCode = 0;
        return r;
    }
    // the soft return starts commands this way: none here either (it falls back to execute())
    std::unique_ptr<elsai::RunningCommand> startCommand(const QString &, std::optional<double>,
                                                        const QString &,
                                                        const elsai::ExecuteOptions &) override
    {
        return nullptr;
    }
};

bool touchesHost(const QJsonObject &o)
{
    const QString op = o.value(QStringLiteral("op")).toString();
    if (op == QLatin1String("download_files") || op == QLatin1String("flush") ||
        op == QLatin1String("sleep")) {
        return true;
    }
    if (op == QLatin1String("stop"))
        return o.value(QStringLiteral("sync")) != QJsonValue(false);
    if (op == QLatin1String("add_files")) {
        const QJsonObject files = o.value(QStringLiteral("files")).toObject();
        for (auto it = files.begin(); it != files.end(); ++it) {
            if (it.value().toObject().contains(QStringLiteral("host")))
                return true;
        }
    }
    return false;
}

struct Fixture
{
    QTemporaryDir dir;
    elsai::SandboxPtr sandbox;
    std::unique_ptr<elsai::ScriptRunner> runner;
    int runs = 0;

    Fixture()
    {
        QLoggingCategory::setFilterRules(QStringLiteral("elsai.*=false"));
        reset();
    }
    void reset()
    {
        runner.reset();
        if (sandbox)
            sandbox->stop(false);
        // a long run must not fill the disk with what scripts wrote
        QDir(dir.path()).removeRecursively();
        QDir().mkpath(dir.path());
        runs = 0;
        sandbox = elsai::Sandbox::create(QStringLiteral("fuzz"),
                                         std::make_shared<NoExecBackend>(dir.path()), std::nullopt);
        sandbox->start();
        runner = std::make_unique<elsai::ScriptRunner>(sandbox);
    }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static Fixture fixture;
    if (size > 16384)
        return 0;
    const QByteArray script(reinterpret_cast<const char *>(data), qsizetype(size));
    for (const QByteArray &line : script.split('\n')) {
        const QJsonDocument doc = QJsonDocument::fromJson(line.trimmed());
        if (doc.isObject() && touchesHost(doc.object()))
            continue;
        const auto result = fixture.runner->runLine(line);
        const QByteArray t = line.trimmed();
        if (t.isEmpty() || t.startsWith('#')) {
            if (result)
                std::abort();
            continue;
        }
        if (!result || !result->contains(QStringLiteral("op")) ||
            !result->value(QStringLiteral("ok")).isBool()) {
            std::abort();
        }
    }
    // a script may stop the sandbox; the next one starts fresh (and every 1,000 inputs)
    if (!fixture.sandbox->isStarted() || ++fixture.runs >= 1000)
        fixture.reset();
    return 0;
}
