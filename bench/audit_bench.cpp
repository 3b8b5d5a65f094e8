// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Append rate and memory of AuditLogModel against a QStandardItemModel holding the same rows
// (six columns of display strings, one QStandardItem per cell).
//
// Both variants build the same AuditEvent per row (realistic fields: execute, read/write,
// list, add_files, attach records over a few workspaces and actors); the audit model appends
// it (batched, as in the window, then flush()), the QStandardItemModel variant turns it into
// the six display strings the audit model shows and appends a row of items. Freed memory is
// not reliably returned to the system, so every variant runs in a fresh child process
// (this program, --variant), which reports its time and its RSS growth. Two more runs time
// the input alone (build: the AuditEvents; text: plus their display strings).
//
// Usage: audit_bench [--rows N (default 1000000)] [--rounds R (default 1)]
//        audit_bench --variant audit|standard|build|text [--rows N]   (one child run)
//        audit_bench --classify [--bytes B (default 1048576)]
//
// --classify times the execute record's command fields (commandAuditFields: SHA-256 and the
// shell-operation classifier) on commands of B bytes built from inputs that were worst cases
// for the old regex classifier, against one pass of QString::count over the same text (the
// cheapest linear scan) as the baseline ratio. The target: a 1 MB command is answered
// in well under a second.

#include "audit.h"
#include "auditlogmodel.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QJsonArray>
#include <QProcess>
#include <QStandardItemModel>
#include <QStringList>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace elsai {
namespace {

using Clock = std::chrono::steady_clock;

/// A field of /proc/self/status in KiB ("VmRSS", "VmHWM"); -1 when unavailable.
qint64 procStatusKiB(const char *name)
{
    std::ifstream in("/proc/self/status");
    std::string line;
    const size_t len = std::strlen(name);
    while (std::getline(in, line)) {
        if (line.compare(0, len, name) == 0 && line.size() > len && line[len] == ':')
            return std::stoll(line.substr(len + 1));
    }
    return -1;
}

/// Deterministic, varied audit records like the engine emits them.
class EventGenerator
{
public:
    AuditEvent make(qint64 i)
    {
        AuditEvent e;
        e.timestamp = m_base.addMSecs(i * 3);
        e.sequence = i + 1;
        e.workspaceId = m_workspaces[i % m_workspaces.size()];
        e.actor = m_actors[(i / 3) % m_actors.size()];
        e.outcome = i % 29 == 0 ? m_error : i % 41 == 0 ? m_denied : m_ok;
        const QString path = QStringLiteral("src/pkg%1/module%2.py").arg(i % 97).arg(i % 13);
        switch (i % 6) {
        case 0:
        case 1: {
            QJsonObject f;
            f.insert(QStringLiteral("command_length"), int(20 + i % 180));
            f.insert(QStringLiteral("command_sha256"),
                     QString::number(quint64(i) * 0x9E3779B97F4A7C15ull, 16).left(12));
            f.insert(QStringLiteral("inferred_op"), m_ops[i % m_ops.size()]);
            f.insert(QStringLiteral("exit_code"), int(i % 7 == 0));
            f.insert(QStringLiteral("duration_ms"), int(5 + i % 4000));
            f.insert(QStringLiteral("truncated"), false);
            f.insert(QStringLiteral("timed_out"), false);
            e.event = m_execute;
            e.fields = f;
            break;
        }
        case 2:
            e.event = m_readFile;
            e.fields.insert(QStringLiteral("path"), path);
            break;
        case 3:
            e.event = m_writeFile;
            e.fields.insert(QStringLiteral("path"), path);
            e.fields.insert(QStringLiteral("bytes"), int(100 + i % 9000));
            break;
        case 4:
            e.event = m_listDir;
            e.fields.insert(QStringLiteral("path"), QStringLiteral("src/pkg%1").arg(i % 97));
            break;
        case 5:
            e.event = i % 12 == 5 ? m_attach : m_addFiles;
            if (e.event == m_attach)
                e.fields.insert(QStringLiteral("mode"), QStringLiteral("read_write"));
            else
                e.fields.insert(QStringLiteral("paths"),
                                QJsonArray{path, path + QStringLiteral(".bak")});
            break;
        }
        return e;
    }

private:
    static QStringList words(const char *text)
    {
        return QString::fromLatin1(text).split(QLatin1Char(' '));
    }
    static QDateTime baseTime()
    {
        // UTC as the engine stamps records (currentDateTimeUtc(): no time-zone object per
        // record), at a fixed instant.
        QDateTime t = QDateTime::currentDateTimeUtc();
        t.setMSecsSinceEpoch(1740819600000);
        return t;
    }
    const QDateTime m_base = baseTime();
    const QStringList m_workspaces = words("workbench agent-run-17 review scratch");
    const QStringList m_actors = words("coder reviewer host console human");
    const QStringList m_ops = words("shell python git build read");
    const QString m_ok = QStringLiteral("ok"), m_error = QStringLiteral("error");
    const QString m_denied = QStringLiteral("denied");
    const QString m_execute = QStringLiteral("sandbox.execute");
    const QString m_readFile = QStringLiteral("sandbox.read_file");
    const QString m_writeFile = QStringLiteral("sandbox.write_file");
    const QString m_listDir = QStringLiteral("sandbox.list_dir");
    const QString m_addFiles = QStringLiteral("sandbox.add_files");
    const QString m_attach = QStringLiteral("attach");
};

QStringList displayTexts(const AuditEvent &e)
{
    QStringList texts;
    for (int c = 0; c < AuditLogModel::ColumnCount; ++c)
        texts.append(AuditLogModel::columnText(e, c));
    return texts;
}

/// One child run: builds `rows` records into the variant's model; prints one "result" line.
int runVariant(const QString &variant, qint64 rows)
{
    EventGenerator gen;
    const qint64 rss0 = procStatusKiB("VmRSS");
    const qint64 hwm0 = procStatusKiB("VmHWM");
    const auto start = Clock::now();
    qint64 count = 0;
    QString sample;
    if (variant == u"audit") {
        AuditLogModel model;
        model.setRowCap(int(std::max<qint64>(rows, 1000000)));
        for (qint64 i = 0; i < rows; ++i)
            model.append(gen.make(i));
        model.flush();
        count = model.rowCount();
        sample = model.index(int(count / 2), AuditLogModel::DetailsColumn).data().toString();
        const double s = std::chrono::duration<double>(Clock::now() - start).count();
        std::printf("result %s rows %lld s %.4f rss_kib %lld hwm_kib %lld batch %d\n",
                    qPrintable(variant), static_cast<long long>(count), s,
                    static_cast<long long>(procStatusKiB("VmRSS") - rss0),
                    static_cast<long long>(procStatusKiB("VmHWM") - hwm0), model.batchSize());
    } else if (variant == u"standard") {
        QStandardItemModel model(0, AuditLogModel::ColumnCount);
        for (qint64 i = 0; i < rows; ++i) {
            // The same texts the audit model shows (AuditLogModel::columnText).
            const QStringList texts = displayTexts(gen.make(i));
            QList<QStandardItem *> items;
            items.reserve(AuditLogModel::ColumnCount);
            for (const QString &t : texts)
                items.append(new QStandardItem(t));
            model.appendRow(items);
        }
        count = model.rowCount();
        sample = model.index(int(count / 2), AuditLogModel::DetailsColumn).data().toString();
        const double s = std::chrono::duration<double>(Clock::now() - start).count();
        std::printf("result %s rows %lld s %.4f rss_kib %lld hwm_kib %lld batch 1\n",
                    qPrintable(variant), static_cast<long long>(count), s,
                    static_cast<long long>(procStatusKiB("VmRSS") - rss0),
                    static_cast<long long>(procStatusKiB("VmHWM") - hwm0));
    } else if (variant == u"build" || variant == u"text") {
        // Cost of building the records alone ("text": plus their six display strings, as the
        // standard variant makes them); nothing is kept.
        qint64 chars = 0;
        for (qint64 i = 0; i < rows; ++i) {
            const AuditEvent e = gen.make(i);
            if (variant == u"text") {
                for (const QString &t : displayTexts(e))
                    chars += t.size();
            }
            chars += e.event.size();
        }
        count = rows;
        const double s = std::chrono::duration<double>(Clock::now() - start).count();
        std::printf("result %s rows %lld s %.4f rss_kib %lld hwm_kib %lld chars %lld\n",
                    qPrintable(variant), static_cast<long long>(count), s,
                    static_cast<long long>(procStatusKiB("VmRSS") - rss0),
                    static_cast<long long>(procStatusKiB("VmHWM") - hwm0),
                    static_cast<long long>(chars));
    } else {
        std::fprintf(stderr, "audit_bench: unknown variant '%s'\n", qPrintable(variant));
        return 2;
    }
    std::printf("sample %s\n", qPrintable(sample));
    return count == rows ? 0 : 1;
}

struct Result
{
    bool ok = false;
    double seconds = 0;
    qint64 rssKiB = 0;
    qint64 rows = 0;
    QString sample;
};

Result runChild(const QString &variant, qint64 rows)
{
    QProcess p;
    p.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    p.start(
        QCoreApplication::applicationFilePath(),
        {QStringLiteral("--variant"), variant, QStringLiteral("--rows"), QString::number(rows)});
    Result r;
    if (!p.waitForFinished(180000) || p.exitStatus() != QProcess::NormalExit) {
        p.kill();
        p.waitForFinished();
        std::fprintf(stderr, "audit_bench: the %s run did not finish\n", qPrintable(variant));
        return r;
    }
    for (const QString &line : QString::fromUtf8(p.readAllStandardOutput()).split(u'\n')) {
        const QStringList w = line.split(u' ');
        if (w.size() >= 9 && w[0] == u"result") {
            r.rows = w[3].toLongLong();
            r.seconds = w[5].toDouble();
            r.rssKiB = w[7].toLongLong();
        } else if (line.startsWith(u"sample ")) {
            r.sample = line.mid(7);
        }
    }
    r.ok = p.exitCode() == 0 && r.rows == rows;
    return r;
}

QString mem(qint64 kib)
{
    if (kib >= 1024 * 1024)
        return QString::number(double(kib) / (1024 * 1024), 'f', 2) + QStringLiteral(" GiB");
    return QString::number(double(kib) / 1024, 'f', 0) + QStringLiteral(" MiB");
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int runClassify(qint64 bytes)
{
    const std::pair<const char *, QString> kinds[] = {
        {"quotes", QStringLiteral("'")},
        {"command substitutions", QStringLiteral("$(")},
        {"sudo chain", QStringLiteral("sudo ")},
        {"assignments", QStringLiteral("A=b ")},
        {"find segments", QStringLiteral("find ")},
        {"redirections", QStringLiteral("> ")},
        {"plain words", QStringLiteral("echo hello world; ")},
    };
    bool ok = true;
    for (const auto &[name, unit] : kinds) {
        const QString command = unit.repeated(qsizetype(bytes / unit.size() + 1)).left(bytes);
        // the baseline: one linear pass over the same text
        const auto b0 = Clock::now();
        qsizetype sink = 0;
        for (int k = 0; k < 5; ++k)
            sink += command.count(QLatin1Char('\x01'));
        const double base = std::chrono::duration<double>(Clock::now() - b0).count() / 5;
        const auto t0 = Clock::now();
        QJsonObject fields;
        for (int k = 0; k < 5; ++k)
            fields = commandAuditFields(command);
        const double t = std::chrono::duration<double>(Clock::now() - t0).count() / 5;
        const auto c0 = Clock::now();
        const QString op = inferShellOperation(command);
        const double c = std::chrono::duration<double>(Clock::now() - c0).count();
        std::printf("classify %-22s %lld bytes: fields %.1f ms (classifier alone %.1f ms), "
                    "op %s; ratio to one count() pass %.0f%s\n",
                    name, static_cast<long long>(bytes), t * 1000, c * 1000, qPrintable(op),
                    base > 0 ? t / base : 0.0, sink ? "" : "");
        ok = ok && t < 1.0;
    }
    return ok ? 0 : 1;
}

} // namespace
} // namespace elsai

int main(int argc, char **argv)
{
    using namespace elsai;
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments();
    auto option = [&args](const QString &name, const QString &fallback) {
        const qsizetype i = args.indexOf(name);
        return i >= 0 && i + 1 < args.size() ? args.at(i + 1) : fallback;
    };
    const qint64 rows = std::max<qint64>(
        1, option(QStringLiteral("--rows"), QStringLiteral("1000000")).toLongLong());
    const int rounds = qMax(1, option(QStringLiteral("--rounds"), QStringLiteral("1")).toInt());
    if (const QString variant = option(QStringLiteral("--variant"), {}); !variant.isEmpty())
        return runVariant(variant, rows);
    if (args.contains(QStringLiteral("--classify")))
        return runClassify(std::max<qint64>(
            1, option(QStringLiteral("--bytes"), QStringLiteral("1048576")).toLongLong()));

    // Fresh process per run; variants alternate which goes first, round by round.
    std::vector<double> auditS, standardS, timeRatios;
    std::vector<double> auditKiB, standardKiB;
    Result build, text;
    bool ok = true;
    QString auditSample, standardSample;
    for (int round = 0; round < rounds; ++round) {
        Result a, s;
        if (round % 2 == 0) {
            a = runChild(QStringLiteral("audit"), rows);
            s = runChild(QStringLiteral("standard"), rows);
        } else {
            s = runChild(QStringLiteral("standard"), rows);
            a = runChild(QStringLiteral("audit"), rows);
        }
        ok = ok && a.ok && s.ok;
        if (!a.ok || !s.ok)
            break;
        auditS.push_back(a.seconds);
        standardS.push_back(s.seconds);
        timeRatios.push_back(a.seconds / s.seconds);
        auditKiB.push_back(double(a.rssKiB));
        standardKiB.push_back(double(s.rssKiB));
        auditSample = a.sample;
        standardSample = s.sample;
    }
    if (!ok) {
        std::fprintf(stderr, "audit_bench: a run failed\n");
        return 1;
    }
    build = runChild(QStringLiteral("build"), rows);
    text = runChild(QStringLiteral("text"), rows);
    if (auditSample != standardSample)
        std::fprintf(stderr, "audit_bench: the models disagree on a row:\n  %s\n  %s\n",
                     qPrintable(auditSample), qPrintable(standardSample));

    const double a = median(auditS), s = median(standardS);
    const double am = median(auditKiB), sm = median(standardKiB);
    auto rate = [rows](double sec) {
        return QString::number(sec > 0 ? double(rows) / sec / 1000 : 0, 'f', 0) +
               QStringLiteral("k rows/s");
    };
    std::printf("rows: %lld per variant, %d round(s), one fresh process per run\n",
                static_cast<long long>(rows), rounds);
    std::printf("audit model: %lld rows in %.2f s (%s), +%s; QStandardItemModel: %.2f s "
                "(%s), +%s; ratio time %.2f, memory %.2f\n",
                static_cast<long long>(rows), a, qPrintable(rate(a)), qPrintable(mem(qint64(am))),
                s, qPrintable(rate(s)), qPrintable(mem(qint64(sm))), median(timeRatios),
                sm > 0 ? am / sm : 0.0);
    // Both include building their input: the AuditEvents, plus for the standard variant the
    // six display strings. Without it, what the models themselves cost (rough: a difference of
    // separate runs):
    const double aNet = a - build.seconds, sNet = s - text.seconds;
    std::printf("input alone: AuditEvents %.2f s, AuditEvents + display strings %.2f s; net "
                "of it: audit model %.2f s, QStandardItemModel %.2f s, ratio %.2f\n",
                build.seconds, text.seconds, aNet, sNet, sNet > 0 ? aNet / sNet : 0.0);
    std::printf("per row: audit model %.0f B, QStandardItemModel %.0f B (RSS growth / rows)\n",
                am * 1024 / double(rows), sm * 1024 / double(rows));
    return 0;
}
