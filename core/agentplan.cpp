// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "agentplan.h"

#include "errors.h"
#include "process.h"
#include "sandboxplugin.h"
#include "sessionrecorder.h"
#include "treesnapshot.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QSet>

#include <cmath>
#include <limits>
#include <utility>

namespace elsai {

namespace {

constexpr qint64 kMaxDelayMs = 600000;     // ten minutes: longer is a typo, not a demo
constexpr qint64 kMaxPlanBytes = 16 << 20; // far above any plan, far below any harm

/// Where a parse error is: "plan 'x'", then "step 3 ('run tests')", then a field path.
class Where
{
public:
    Where(QString plan) : m_text(QStringLiteral("plan '%1'").arg(plan)) {}
    Where step(int index, const QString &name) const
    {
        Where w = *this;
        w.m_text += name.isEmpty() ? QStringLiteral(", step %1").arg(index + 1)
                                   : QStringLiteral(", step %1 ('%2')").arg(index + 1).arg(name);
        return w;
    }
    [[noreturn]] void fail(const QString &field, const QString &problem) const
    {
        throw ValueError(QStringLiteral("%1: field '%2' %3").arg(m_text, field, problem));
    }
    [[noreturn]] void fail(const QString &problem) const
    {
        throw ValueError(QStringLiteral("%1: %2").arg(m_text, problem));
    }

private:
    QString m_text;
};

void rejectUnknown(const QJsonObject &o, const QStringList &known, const Where &where,
                   const QString &prefix = QString())
{
    for (auto it = o.begin(); it != o.end(); ++it) {
        if (!known.contains(it.key()))
            where.fail(prefix + it.key(),
                       QStringLiteral("is unknown; valid fields: %1").arg(known.join(u", ")));
    }
}

QString requiredString(const QJsonObject &o, const QString &key, const Where &where,
                       const QString &prefix = QString())
{
    const QJsonValue v = o.value(key);
    if (v.isUndefined())
        where.fail(prefix + key, QStringLiteral("is required"));
    if (!v.isString() || v.toString().isEmpty())
        where.fail(prefix + key, QStringLiteral("must be a non-empty string"));
    return v.toString();
}

std::optional<QString> optionalString(const QJsonObject &o, const QString &key, const Where &where,
                                      const QString &prefix = QString())
{
    const QJsonValue v = o.value(key);
    if (v.isUndefined())
        return std::nullopt;
    if (!v.isString())
        where.fail(prefix + key, QStringLiteral("must be a string"));
    return v.toString();
}

qint64 wholeNumber(const QJsonValue &v, qint64 min, qint64 max, const QString &field,
                   const Where &where)
{
    const double d = v.toDouble(std::nan(""));
    if (!v.isDouble() || d != std::floor(d) || d < double(min) || d > double(max))
        where.fail(field, QStringLiteral("must be a whole number from %1 to %2").arg(min).arg(max));
    return qint64(d);
}

/// A string or an array of strings.
QStringList stringOrList(const QJsonValue &v, const QString &field, const Where &where)
{
    if (v.isString())
        return {v.toString()};
    QStringList out;
    if (v.isArray()) {
        for (const QJsonValue &item : v.toArray()) {
            if (!item.isString())
                where.fail(field, QStringLiteral("must be a string or an array of strings"));
            out.append(item.toString());
        }
        return out;
    }
    where.fail(field, QStringLiteral("must be a string or an array of strings"));
}

/// The string arguments each built-in tool requires, from the tools' own schemas (the ones
/// Agent::callTool checks); other tools are checked when they are called.
QStringList requiredArgs(const QString &tool)
{
    for (const Tool &t : SandboxPlugin::tools(SandboxAttachMode::ReadWrite, true)) {
        if (t.name != tool)
            continue;
        QStringList out;
        for (const QJsonValue &r : t.inputSchema.value(QLatin1String("required")).toArray())
            out.append(r.toString());
        return out;
    }
    return {};
}

/// A recorded hash: "sha256:" and 64 hex digits.
QString sha256Field(const QJsonObject &o, const QString &key, const Where &where, const QString &p)
{
    static const QRegularExpression form(QStringLiteral("^sha256:[0-9a-f]{64}$"));
    const QString v = optionalString(o, key, where, p).value_or(QString());
    if (!form.match(v).hasMatch())
        where.fail(p + key, QStringLiteral("must be \"sha256:\" and 64 hex digits"));
    return v;
}

/// A recorded path state (workspaceEntryState()).
bool isEntryState(const QString &v)
{
    static const QRegularExpression form(
        QStringLiteral("^(sha256:[0-9a-f]{64}|size:[0-9]+|folder|symlink|other|absent)$"));
    return form.match(v).hasMatch();
}

PlanExpectation parseExpectation(const QJsonObject &o, const QString &tool, int version,
                                 const Where &where)
{
    static const QStringList known1 = {QStringLiteral("error"),
                                       QStringLiteral("error_contains"),
                                       QStringLiteral("exit_code"),
                                       QStringLiteral("output_contains"),
                                       QStringLiteral("output_not_contains"),
                                       QStringLiteral("output_matches"),
                                       QStringLiteral("content"),
                                       QStringLiteral("fields")};
    static const QStringList known2 =
        known1 + QStringList{QStringLiteral("changes"), QStringLiteral("files"),
                             QStringLiteral("content_sha256"), QStringLiteral("names_sha256")};
    const QString p = QStringLiteral("expect.");
    rejectUnknown(o, version >= 2 ? known2 : known1, where, p);
    PlanExpectation e;
    e.error = optionalString(o, QStringLiteral("error"), where, p);
    if (e.error && e.error->isEmpty())
        where.fail(p + QStringLiteral("error"), QStringLiteral("must name an error type"));
    e.errorContains = optionalString(o, QStringLiteral("error_contains"), where, p);
    if (e.errorContains && !e.error)
        where.fail(p + QStringLiteral("error_contains"),
                   QStringLiteral("needs 'error' (the error type the step must raise)"));
    if (o.contains(QStringLiteral("exit_code"))) {
        if (tool != QLatin1String("execute"))
            where.fail(p + QStringLiteral("exit_code"), QStringLiteral("applies to execute only"));
        e.exitCode = int(wholeNumber(o.value(QStringLiteral("exit_code")), -255, 255,
                                     p + QStringLiteral("exit_code"), where));
    }
    if (o.contains(QStringLiteral("output_contains")))
        e.outputContains = stringOrList(o.value(QStringLiteral("output_contains")),
                                        p + QStringLiteral("output_contains"), where);
    if (o.contains(QStringLiteral("output_not_contains")))
        e.outputNotContains = stringOrList(o.value(QStringLiteral("output_not_contains")),
                                           p + QStringLiteral("output_not_contains"), where);
    if (const auto pattern = optionalString(o, QStringLiteral("output_matches"), where, p)) {
        QRegularExpression re(*pattern, QRegularExpression::MultilineOption);
        if (!re.isValid())
            where.fail(p + QStringLiteral("output_matches"),
                       QStringLiteral("is not a valid regular expression: %1 at offset %2")
                           .arg(re.errorString())
                           .arg(re.patternErrorOffset()));
        e.outputMatches = re;
    }
    e.content = optionalString(o, QStringLiteral("content"), where, p);
    if (e.content && tool != QLatin1String("read_file"))
        where.fail(p + QStringLiteral("content"), QStringLiteral("applies to read_file only"));
    if (o.contains(QStringLiteral("fields"))) {
        if (!o.value(QStringLiteral("fields")).isObject())
            where.fail(p + QStringLiteral("fields"), QStringLiteral("must be an object"));
        e.fields = o.value(QStringLiteral("fields")).toObject();
    }
    if (o.contains(QStringLiteral("changes"))) {
        const QJsonValue v = o.value(QStringLiteral("changes"));
        if (!v.isObject())
            where.fail(p + QStringLiteral("changes"), QStringLiteral("must be an object"));
        const QJsonObject c = v.toObject();
        const QString cp = p + QStringLiteral("changes.");
        rejectUnknown(
            c, {QStringLiteral("added"), QStringLiteral("modified"), QStringLiteral("deleted")},
            where, cp);
        for (auto it = c.begin(); it != c.end(); ++it) {
            if (it.value().isDouble()) {
                wholeNumber(it.value(), 0, std::numeric_limits<qint32>::max(), cp + it.key(),
                            where);
                continue;
            }
            if (!it.value().isArray())
                where.fail(cp + it.key(), QStringLiteral("must be an array of paths or a count"));
            for (const QJsonValue &path : it.value().toArray()) {
                if (!path.isString() || path.toString().isEmpty())
                    where.fail(cp + it.key(),
                               QStringLiteral("must be an array of paths or a count"));
            }
        }
        e.changes = c;
    }
    if (o.contains(QStringLiteral("files"))) {
        const QJsonValue v = o.value(QStringLiteral("files"));
        if (!v.isObject())
            where.fail(p + QStringLiteral("files"), QStringLiteral("must be an object"));
        const QJsonObject files = v.toObject();
        for (auto it = files.begin(); it != files.end(); ++it) {
            if (it.key().isEmpty() || !isEntryState(it.value().toString()))
                where.fail(p + QStringLiteral("files.") + it.key(),
                           QStringLiteral("must be \"sha256:<64 hex>\", \"size:<bytes>\", "
                                          "\"folder\", \"symlink\", \"other\" or "
                                          "\"absent\""));
            e.files.insert(it.key(), it.value().toString());
        }
    }
    if (o.contains(QStringLiteral("content_sha256"))) {
        if (tool != QLatin1String("read_file"))
            where.fail(p + QStringLiteral("content_sha256"),
                       QStringLiteral("applies to read_file only"));
        e.contentSha256 = sha256Field(o, QStringLiteral("content_sha256"), where, p);
    }
    if (o.contains(QStringLiteral("names_sha256"))) {
        if (tool != QLatin1String("list_dir"))
            where.fail(p + QStringLiteral("names_sha256"),
                       QStringLiteral("applies to list_dir only"));
        e.namesSha256 = optionalString(o, QStringLiteral("names_sha256"), where, p);
        static const QRegularExpression form(
            QStringLiteral("^(sha256:[0-9a-f]{64}|absent|folder of [0-9]+ entries)$"));
        if (!form.match(*e.namesSha256).hasMatch())
            where.fail(p + QStringLiteral("names_sha256"),
                       QStringLiteral("must be \"sha256:\" and 64 hex digits"));
    }
    const bool checksResult = e.exitCode || !e.outputContains.isEmpty() ||
                              !e.outputNotContains.isEmpty() || e.outputMatches || e.content ||
                              !e.fields.isEmpty() || !e.changes.isEmpty() || !e.files.isEmpty() ||
                              e.contentSha256 || e.namesSha256;
    if (e.error && checksResult)
        where.fail(p + QStringLiteral("error"),
                   QStringLiteral("cannot be combined with result checks (a step that raises "
                                  "has no result)"));
    return e;
}

/// An "agent" object: {"name", "mode"}, both optional.
void parseAgent(const QJsonValue &a, const QString &field, const Where &where, QString *name,
                SandboxAttachMode *mode)
{
    if (!a.isObject())
        where.fail(field, QStringLiteral("must be an object"));
    const QJsonObject agent = a.toObject();
    const QString prefix = field + u'.';
    rejectUnknown(agent, {QStringLiteral("name"), QStringLiteral("mode")}, where, prefix);
    if (agent.contains(QStringLiteral("name")))
        *name = requiredString(agent, QStringLiteral("name"), where, prefix);
    if (const auto m = optionalString(agent, QStringLiteral("mode"), where, prefix)) {
        try {
            *mode = attachModeFromString(*m);
        } catch (const ValueError &e) {
            where.fail(prefix + QStringLiteral("mode"), e.message());
        }
    }
}

PlanStep parseStep(const QJsonValue &value, int index, int version, const Where &planWhere,
                   QSet<QString> &names)
{
    if (!value.isObject())
        planWhere.step(index, QString()).fail(QStringLiteral("must be an object"));
    const QJsonObject o = value.toObject();
    const QString rawName = o.value(QStringLiteral("name")).toString();
    const Where where = planWhere.step(index, rawName);
    QStringList known{QStringLiteral("name"), QStringLiteral("tool"), QStringLiteral("args"),
                      QStringLiteral("expect"), QStringLiteral("delay_ms")};
    if (version >= 2)
        known.append(QStringLiteral("agent"));
    rejectUnknown(o, known, where);
    PlanStep s;
    s.name = requiredString(o, QStringLiteral("name"), where);
    if (names.contains(s.name))
        where.fail(QStringLiteral("name"), QStringLiteral("is not unique in the plan"));
    names.insert(s.name);
    s.tool = requiredString(o, QStringLiteral("tool"), where);
    if (o.contains(QStringLiteral("args"))) {
        if (!o.value(QStringLiteral("args")).isObject())
            where.fail(QStringLiteral("args"), QStringLiteral("must be an object"));
        s.args = o.value(QStringLiteral("args")).toObject();
    }
    for (const QString &arg : requiredArgs(s.tool)) {
        if (!s.args.value(arg).isString())
            where.fail(QStringLiteral("args.") + arg,
                       QStringLiteral("is required by %1 and must be a string").arg(s.tool));
    }
    if (o.contains(QStringLiteral("expect"))) {
        if (!o.value(QStringLiteral("expect")).isObject())
            where.fail(QStringLiteral("expect"), QStringLiteral("must be an object"));
        s.expect =
            parseExpectation(o.value(QStringLiteral("expect")).toObject(), s.tool, version, where);
    }
    if (o.contains(QStringLiteral("agent"))) {
        QString name;
        parseAgent(o.value(QStringLiteral("agent")), QStringLiteral("agent"), where, &name,
                   &s.agentMode);
        if (name.isEmpty())
            where.fail(QStringLiteral("agent.name"), QStringLiteral("is required"));
        s.agentName = name;
    }
    if (o.contains(QStringLiteral("delay_ms")))
        s.delayMs = wholeNumber(o.value(QStringLiteral("delay_ms")), 0, kMaxDelayMs,
                                QStringLiteral("delay_ms"), where);
    return s;
}

QString excerpt(const QString &text)
{
    constexpr int kMax = 200;
    QString t = text.size() > kMax ? text.left(kMax) + QStringLiteral("…") : text;
    return t.replace(QLatin1Char('\n'), QStringLiteral("\\n"));
}

QString compact(const QJsonValue &v)
{
    if (v.isUndefined())
        return QStringLiteral("nothing");
    return QString::fromUtf8(
        QJsonDocument(QJsonArray{v}).toJson(QJsonDocument::Compact).chopped(1).mid(1));
}

} // namespace

// ---- AgentPlan --------------------------------------------------------------------------------

AgentPlan AgentPlan::parse(const QByteArray &json, const QString &fallbackName)
{
    const QString label = fallbackName.isEmpty() ? QStringLiteral("<unnamed>") : fallbackName;
    QJsonParseError err;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &err);
    if (err.error != QJsonParseError::NoError)
        Where(label).fail(QStringLiteral("malformed JSON at offset %1: %2")
                              .arg(err.offset)
                              .arg(err.errorString()));
    if (!doc.isObject())
        Where(label).fail(QStringLiteral("a plan must be a JSON object"));
    const QJsonObject o = doc.object();

    AgentPlan plan;
    plan.name = o.value(QStringLiteral("name")).toString(fallbackName);
    const Where where(plan.name.isEmpty() ? label : plan.name);
    if (requiredString(o, QStringLiteral("format"), where) != formatName())
        where.fail(QStringLiteral("format"), QStringLiteral("must be \"%1\"").arg(formatName()));
    if (!o.contains(QStringLiteral("version")))
        where.fail(QStringLiteral("version"),
                   QStringLiteral("is required (this build reads versions 1 to %1)").arg(kVersion));
    const double version = o.value(QStringLiteral("version")).toDouble(-1);
    if (version != 1 && version != 2)
        where.fail(QStringLiteral("version"),
                   QStringLiteral("is %1, but this build reads versions 1 to %2 only")
                       .arg(compact(o.value(QStringLiteral("version"))))
                       .arg(kVersion));
    plan.version = int(version);
    QStringList known{QStringLiteral("format"), QStringLiteral("version"),
                      QStringLiteral("name"),   QStringLiteral("description"),
                      QStringLiteral("agent"),  QStringLiteral("stop_on_failure"),
                      QStringLiteral("steps")};
    if (plan.version >= 2)
        known << QStringLiteral("start") << QStringLiteral("ignore");
    rejectUnknown(o, known, where);
    if (o.contains(QStringLiteral("name")) && !o.value(QStringLiteral("name")).isString())
        where.fail(QStringLiteral("name"), QStringLiteral("must be a string"));
    plan.description = optionalString(o, QStringLiteral("description"), where).value_or(QString());
    if (o.contains(QStringLiteral("agent")))
        parseAgent(o.value(QStringLiteral("agent")), QStringLiteral("agent"), where,
                   &plan.agentName, &plan.mode);
    if (o.contains(QStringLiteral("start"))) {
        const QJsonValue v = o.value(QStringLiteral("start"));
        if (!v.isObject())
            where.fail(QStringLiteral("start"), QStringLiteral("must be an object"));
        const QJsonObject start = v.toObject();
        const QString sp = QStringLiteral("start.");
        rejectUnknown(start, {QStringLiteral("checkpoint"), QStringLiteral("digest")}, where, sp);
        PlanStart ps;
        ps.checkpoint = requiredString(start, QStringLiteral("checkpoint"), where, sp);
        ps.digest = requiredString(start, QStringLiteral("digest"), where, sp);
        static const QRegularExpression hex(QStringLiteral("^[0-9a-f]{16,128}$"));
        if (!hex.match(ps.digest).hasMatch())
            where.fail(sp + QStringLiteral("digest"), QStringLiteral("must be hex digits"));
        plan.start = ps;
    }
    if (o.contains(QStringLiteral("ignore"))) {
        plan.ignore =
            stringOrList(o.value(QStringLiteral("ignore")), QStringLiteral("ignore"), where);
        for (const QString &g : std::as_const(plan.ignore)) {
            if (!GlobPattern(g).isValid())
                where.fail(QStringLiteral("ignore"),
                           QStringLiteral("has an invalid glob '%1'").arg(g));
        }
    }
    if (o.contains(QStringLiteral("stop_on_failure"))) {
        if (!o.value(QStringLiteral("stop_on_failure")).isBool())
            where.fail(QStringLiteral("stop_on_failure"), QStringLiteral("must be true or false"));
        plan.stopOnFailure = o.value(QStringLiteral("stop_on_failure")).toBool();
    }
    const QJsonValue steps = o.value(QStringLiteral("steps"));
    if (!steps.isArray() || steps.toArray().isEmpty())
        where.fail(QStringLiteral("steps"), QStringLiteral("must be a non-empty array of steps"));
    QSet<QString> names;
    const QJsonArray array = steps.toArray();
    for (int i = 0; i < array.size(); ++i)
        plan.steps.append(parseStep(array.at(i), i, plan.version, where, names));
    return plan;
}

AgentPlan AgentPlan::load(const QString &source)
{
    QString path = source;
    if (source.startsWith(demoPrefix())) {
        const QString name = source.mid(demoPrefix().size());
        if (!demoNames().contains(name))
            throw ValueError(QStringLiteral("no demo plan '%1'; the demos are: %2")
                                 .arg(name, demoNames().join(u", ")));
        path = QStringLiteral(":/plans/%1.json").arg(name);
    }
    // Only a regular file: opening a FIFO would block the run, a device would never end.
    const QFileInfo info(path);
    if (info.exists() && !info.isFile())
        throw OSError(QStringLiteral("cannot read plan '%1': not a regular file").arg(source));
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw OSError(QStringLiteral("cannot read plan '%1': %2; give a plan file or "
                                     "demo:NAME")
                          .arg(source, file.errorString()));
    const QByteArray json = file.read(kMaxPlanBytes + 1);
    if (json.size() > kMaxPlanBytes)
        throw ValueError(QStringLiteral("plan '%1' is larger than %2 MiB; a plan is a list of "
                                        "steps, put large contents in files")
                             .arg(source)
                             .arg(kMaxPlanBytes >> 20));
    return parse(json, info.completeBaseName());
}

QStringList AgentPlan::demoNames()
{
    QStringList names;
    const QStringList files = QDir(QStringLiteral(":/plans"))
                                  .entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
    for (const QString &f : files)
        names.append(QFileInfo(f).completeBaseName());
    return names;
}

// ---- results and expectations -----------------------------------------------------------------

QString toString(StepOutcome outcome)
{
    switch (outcome) {
    case StepOutcome::Ok:
        return QStringLiteral("ok");
    case StepOutcome::Error:
        return QStringLiteral("error");
    case StepOutcome::Skipped:
        return QStringLiteral("skipped");
    case StepOutcome::Cancelled:
        return QStringLiteral("cancelled");
    }
    return QString();
}

QJsonObject StepResult::toJson() const
{
    QJsonObject o{
        {QStringLiteral("step"), index + 1}, {QStringLiteral("name"), name},
        {QStringLiteral("tool"), tool},      {QStringLiteral("outcome"), toString(outcome)},
        {QStringLiteral("passed"), passed},  {QStringLiteral("duration_ms"), durationMs}};
    if (!reason.isEmpty())
        o.insert(QStringLiteral("reason"), reason);
    if (outcome == StepOutcome::Ok)
        o.insert(QStringLiteral("result"), data);
    if (outcome == StepOutcome::Error)
        o.insert(QStringLiteral("error"), QJsonObject{{QStringLiteral("type"), errorType},
                                                      {QStringLiteral("message"), errorMessage}});
    if (!divergences.isEmpty()) {
        QJsonArray list;
        for (const Divergence &d : divergences)
            list.append(d.toJson());
        o.insert(QStringLiteral("divergences"), list);
    }
    return o;
}

// ---- recorded plans ---------------------------------------------------------------------------

QJsonObject Divergence::toJson() const
{
    QJsonObject o{{QStringLiteral("check"), check}};
    if (!path.isEmpty())
        o.insert(QStringLiteral("path"), path);
    if (!expected.isUndefined())
        o.insert(QStringLiteral("expected"), expected);
    if (!seen.isUndefined())
        o.insert(QStringLiteral("seen"), seen);
    if (!missing.isEmpty())
        o.insert(QStringLiteral("missing"), QJsonArray::fromStringList(missing));
    if (!unexpected.isEmpty())
        o.insert(QStringLiteral("unexpected"), QJsonArray::fromStringList(unexpected));
    return o;
}

QString Divergence::describe() const
{
    QString text = path.isEmpty() ? check : QStringLiteral("%1 %2").arg(check, path);
    QStringList parts;
    if (!missing.isEmpty())
        parts.append(QStringLiteral("not seen: %1").arg(missing.join(u", ")));
    if (!unexpected.isEmpty())
        parts.append(QStringLiteral("not recorded: %1").arg(unexpected.join(u", ")));
    if (parts.isEmpty())
        parts.append(QStringLiteral("expected %1, seen %2").arg(compact(expected), compact(seen)));
    return text + QStringLiteral(": ") + parts.join(QStringLiteral("; "));
}

QList<Divergence> compareRecorded(const PlanStep &step, bool recorded, const QString &errorType,
                                  const QJsonObject &data, const WorkspaceProbe &probe,
                                  const GlobSet &ignore)
{
    const PlanExpectation &e = step.expect;
    QList<Divergence> out;
    auto differs = [&out](const QString &check, const QJsonValue &expected, const QJsonValue &seen,
                          const QString &path = QString()) {
        Divergence d;
        d.check = check;
        d.path = path;
        d.expected = expected;
        d.seen = seen;
        out.append(d);
    };
    if (recorded) {
        const QString expectedError = e.error.value_or(QString());
        if (expectedError != errorType)
            differs(QStringLiteral("error"),
                    expectedError.isEmpty() ? QStringLiteral("none") : expectedError,
                    errorType.isEmpty() ? QStringLiteral("none") : errorType);
    }
    if (!errorType.isEmpty())
        return out; // a call that raised has no result to compare
    if (recorded && step.tool == QLatin1String("process_start")) {
        // What a background process does after this call returned (its output, its exit, the
        // files it changes between the calls) was recorded by no call: a replay cannot be
        // shown identical, so it says so instead of passing (docs/agents.md).
        differs(QStringLiteral("background_process"), QStringLiteral("replayable"),
                QStringLiteral("not comparable: what process %1 did after process_start "
                               "returned was not recorded")
                    .arg(data.value(QStringLiteral("process_id")).toString()));
    }
    if (recorded && e.exitCode) {
        const QJsonValue code = data.value(QStringLiteral("exit_code"));
        if (code.toInt(INT_MIN) != *e.exitCode)
            differs(QStringLiteral("exit_code"), *e.exitCode, code);
    }
    if (!e.changes.isEmpty()) {
        const QJsonObject seen = data.value(QStringLiteral("changes")).toObject();
        if (seen.isEmpty()) {
            differs(QStringLiteral("changes"), QStringLiteral("tracked"),
                    QStringLiteral("not tracked (the sandbox needs --track-changes)"));
        } else {
            const QJsonObject seenPaths = seen.value(QStringLiteral("paths")).toObject();
            const bool seenWhole = !seen.value(QStringLiteral("paths_truncated")).toBool();
            for (const char *kind : {"added", "modified", "deleted"}) {
                const QString k = QLatin1String(kind);
                const QJsonValue expected = e.changes.value(k);
                if (expected.isUndefined())
                    continue;
                const qint64 seenCount = seen.value(k).toInteger();
                QStringList seenList;
                for (const QJsonValue &v : seenPaths.value(k).toArray()) {
                    if (!ignore.matchesPathOrParent(v.toString(), false))
                        seenList.append(v.toString());
                }
                const QString check = QStringLiteral("changes.") + k;
                if (expected.isDouble() || !seenWhole) {
                    const qint64 count =
                        expected.isDouble() ? expected.toInteger() : expected.toArray().size();
                    if (count != seenCount)
                        differs(check, count, seenCount);
                    continue;
                }
                QStringList expectedList;
                for (const QJsonValue &v : expected.toArray())
                    expectedList.append(v.toString());
                Divergence d;
                d.check = check;
                for (const QString &p : std::as_const(expectedList)) {
                    if (!seenList.contains(p))
                        d.missing.append(p);
                }
                for (const QString &p : std::as_const(seenList)) {
                    if (!expectedList.contains(p))
                        d.unexpected.append(p);
                }
                if (!d.missing.isEmpty() || !d.unexpected.isEmpty())
                    out.append(d);
            }
        }
    }
    for (auto it = e.files.cbegin(); it != e.files.cend(); ++it) {
        QString seen;
        try {
            seen = probe.entryState ? probe.entryState(it.key()) : QStringLiteral("other");
        } catch (const SandboxError &err) {
            seen = QStringLiteral("unreadable: ") + err.message();
        }
        if (seen != it.value())
            differs(QStringLiteral("file"), it.value(), seen, it.key());
    }
    if (e.contentSha256) {
        const QJsonValue content = data.value(QStringLiteral("content"));
        const QString seen = content.isString() ? recordedHash(content.toString().toUtf8())
                                                : QStringLiteral("no content");
        if (seen != *e.contentSha256)
            differs(QStringLiteral("content_sha256"), *e.contentSha256, seen);
    }
    if (e.namesSha256) {
        QString seen;
        try {
            seen = probe.namesHash
                       ? probe.namesHash(step.args.value(QStringLiteral("path")).toString())
                       : QStringLiteral("absent");
        } catch (const SandboxError &err) {
            seen = QStringLiteral("unreadable: ") + err.message();
        }
        if (seen != *e.namesSha256)
            differs(QStringLiteral("names_sha256"), *e.namesSha256, seen);
    }
    return out;
}

QString toString(StartCheck::Outcome outcome)
{
    switch (outcome) {
    case StartCheck::Outcome::None:
        return QStringLiteral("none");
    case StartCheck::Outcome::Restored:
        return QStringLiteral("restored");
    case StartCheck::Outcome::Matched:
        return QStringLiteral("matched");
    case StartCheck::Outcome::Diverged:
        return QStringLiteral("diverged");
    }
    return QString();
}

QJsonObject StartCheck::toJson() const
{
    QJsonObject o{{QStringLiteral("outcome"), toString(outcome)}};
    if (outcome == Outcome::None)
        return o;
    o.insert(QStringLiteral("checkpoint"), checkpoint);
    o.insert(QStringLiteral("expected_digest"), expectedDigest);
    o.insert(QStringLiteral("seen_digest"), seenDigest);
    o.insert(QStringLiteral("message"), message);
    return o;
}

QStringList errorTypeNames(const SandboxError &e)
{
    QStringList names{e.specName()};
    if (dynamic_cast<const ToolNotFoundError *>(&e))
        names.append(QStringLiteral("ValueError"));
    if (dynamic_cast<const OSError *>(&e) && e.specName() != QLatin1String("OSError"))
        names.append(QStringLiteral("OSError"));
    names.append(QStringLiteral("Exception"));
    names.removeDuplicates();
    return names;
}

QString checkExpectation(const PlanStep &step, const QStringList &errorTypes, const QString &text,
                         const QJsonObject &data, const QString &errorMessage)
{
    const PlanExpectation &e = step.expect;
    if (e.error) {
        if (errorTypes.isEmpty())
            return QStringLiteral("expected %1, but the call succeeded").arg(*e.error);
        if (!errorTypes.contains(*e.error))
            return QStringLiteral("expected %1, got %2: %3")
                .arg(*e.error, errorTypes.first(), errorMessage);
        if (e.errorContains && !errorMessage.contains(*e.errorContains))
            return QStringLiteral("the %1 message does not contain \"%2\": %3")
                .arg(errorTypes.first(), *e.errorContains, errorMessage);
        return QString();
    }
    if (!errorTypes.isEmpty())
        return QStringLiteral("the call failed: %1: %2").arg(errorTypes.first(), errorMessage);
    if (e.exitCode) {
        const QJsonValue code = data.value(QStringLiteral("exit_code"));
        if (code.toInt(INT_MIN) != *e.exitCode)
            return QStringLiteral("expected exit code %1, got %2")
                .arg(*e.exitCode)
                .arg(compact(code));
    }
    for (const QString &s : e.outputContains) {
        if (!text.contains(s))
            return QStringLiteral("the output does not contain \"%1\": %2").arg(s, excerpt(text));
    }
    for (const QString &s : e.outputNotContains) {
        if (text.contains(s))
            return QStringLiteral("the output contains \"%1\": %2").arg(s, excerpt(text));
    }
    if (e.outputMatches && !e.outputMatches->match(text).hasMatch())
        return QStringLiteral("the output does not match /%1/: %2")
            .arg(e.outputMatches->pattern(), excerpt(text));
    if (e.content) {
        const QString got = data.value(QStringLiteral("content")).toString();
        if (got != *e.content)
            return QStringLiteral("the content differs: expected \"%1\", got \"%2\"")
                .arg(excerpt(*e.content), excerpt(got));
    }
    for (auto it = e.fields.begin(); it != e.fields.end(); ++it) {
        if (data.value(it.key()) != it.value())
            return QStringLiteral("field '%1' is %2, expected %3")
                .arg(it.key(), compact(data.value(it.key())), compact(it.value()));
    }
    return QString();
}

// ---- AgentPlanRunner --------------------------------------------------------------------------

AgentPlanRunner::AgentPlanRunner(AgentPlan plan, SandboxPtr sandbox, Options options)
    : m_plan(std::move(plan)), m_sandbox(std::move(sandbox)),
      m_agentName(options.agentName.value_or(m_plan.agentName)),
      m_mode(options.mode.value_or(m_plan.mode)), m_options(std::move(options)),
      m_cancelToken(std::make_shared<CancellationToken>())
{
    if (!m_sandbox)
        throw ValueError(QStringLiteral("a plan runner needs a sandbox"));
    if (m_agentName.isEmpty())
        throw ValueError(QStringLiteral("the plan's agent name must not be empty"));
    if (!m_options.clock) {
        auto timer = std::make_shared<QElapsedTimer>();
        timer->start();
        m_options.clock = [timer] { return timer->elapsed(); };
    }
}

AgentPlanRunner::~AgentPlanRunner()
{
    try {
        detach();
    } catch (const std::exception &) {
        // The sandbox may be gone already; the agent dies with the runner either way.
    }
}

AgentPtr AgentPlanRunner::attach()
{
    QMutexLocker lock(&m_mutex);
    if (m_agent && m_agent->attachedSandbox() == m_sandbox)
        return m_agent;
    for (const AttachedAgent &a : m_sandbox->attachedAgents()) {
        if (!a.agent || a.agent->id() != m_agentName || a.agent == m_agent)
            continue;
        if (m_plan.start && !m_options.agentName && !m_agent) {
            // A recorded agent's name taken here (the window's own "console"): its replay.
            m_agentName += QStringLiteral(".replay");
            continue;
        }
        throw SandboxAttachError(
            QStringLiteral("an agent named '%1' is already attached to sandbox '%2'; run the "
                           "plan under another name (--agent-name)")
                .arg(m_agentName, m_sandbox->workspaceId()));
    }
    if (m_agent) {
        m_sandbox->attach(m_agent, m_mode);
        return m_agent;
    }
    AgentConfig config;
    config.sandbox = m_sandbox;
    config.sandboxAttachMode = m_mode;
    config.sandboxMode = SandboxMode::Sandbox;
    config.sandboxOutputOffload = m_options.offload;
    m_agent = Agent::create(m_agentName, config);
    return m_agent;
}

AgentPtr AgentPlanRunner::agent() const
{
    QMutexLocker lock(&m_mutex);
    return m_agent;
}

AgentPtr AgentPlanRunner::agentFor(const PlanStep &step)
{
    const AgentPtr main = attach();
    if (!step.agentName || *step.agentName == m_plan.agentName)
        return main;
    QMutexLocker lock(&m_mutex);
    AgentPtr a = m_stepAgents.value(*step.agentName);
    if (a && a->attachedSandbox() == m_sandbox)
        return a;
    if (a) {
        m_sandbox->attach(a, step.agentMode);
        return a;
    }
    // The name as recorded, unless another agent of that name is attached here (the window's
    // own "console"): then "<name>.replay".
    QString name = *step.agentName;
    for (const AttachedAgent &other : m_sandbox->attachedAgents()) {
        if (other.agent && other.agent->id() == name)
            name += QStringLiteral(".replay");
    }
    AgentConfig config;
    config.sandbox = m_sandbox;
    config.sandboxAttachMode = step.agentMode;
    config.sandboxMode = SandboxMode::Sandbox;
    config.sandboxOutputOffload = m_options.offload;
    a = Agent::create(name, config);
    m_stepAgents.insert(*step.agentName, a);
    return a;
}

void AgentPlanRunner::detach()
{
    QList<AgentPtr> agents;
    {
        QMutexLocker lock(&m_mutex);
        agents = m_stepAgents.values();
        agents.append(m_agent);
    }
    for (const AgentPtr &a : std::as_const(agents)) {
        if (a && a->attachedSandbox())
            m_sandbox->detach(a);
    }
}

StartCheck AgentPlanRunner::prepareStart()
{
    StartCheck check;
    if (!m_plan.start)
        return check;
    check.checkpoint = m_plan.start->checkpoint;
    check.expectedDigest = m_plan.start->digest;
    const auto tt = m_sandbox->timeTravel();
    if (!tt || !tt->options().checkpoints)
        throw ValueError(QStringLiteral("plan '%1' was recorded: its replay needs a sandbox with "
                                        "checkpoints and change tracking (--checkpoints "
                                        "--track-changes)")
                             .arg(m_plan.name));
    bool inStore = false;
    for (const CheckpointInfo &c : m_sandbox->checkpoints())
        inStore = inStore || c.name == check.checkpoint;
    if (inStore)
        m_sandbox->restore(check.checkpoint, m_agentName);
    check.seenDigest = QString::fromLatin1(treeDigest(tt->captureNow()));
    if (check.seenDigest != check.expectedDigest) {
        check.outcome = StartCheck::Outcome::Diverged;
        check.message =
            inStore ? QStringLiteral("checkpoint '%1' was restored, but it is not the recorded "
                                     "start (its digest differs): the steps may diverge")
                          .arg(check.checkpoint)
                    : QStringLiteral("the workspace is not the recorded start (checkpoint '%1' "
                                     "is not in this store, and the workspace's digest "
                                     "differs): the steps may diverge")
                          .arg(check.checkpoint);
    } else {
        check.outcome = inStore ? StartCheck::Outcome::Restored : StartCheck::Outcome::Matched;
        check.message = inStore ? QStringLiteral("restored checkpoint '%1' (the workspace's "
                                                 "changes since were replaced)")
                                      .arg(check.checkpoint)
                                : QStringLiteral("the workspace is the recorded start (its "
                                                 "digest is the recorded one)");
    }
    return check;
}

void AgentPlanRunner::cancel()
{
    QMutexLocker lock(&m_mutex);
    m_cancelled = true;
    m_cancelToken->cancel();
    m_wake.wakeAll();
}

void AgentPlanRunner::defaultSleep(qint64 ms)
{
    QDeadlineTimer deadline(ms);
    QMutexLocker lock(&m_mutex);
    while (!m_cancelled && !deadline.hasExpired())
        m_wake.wait(&m_mutex, deadline);
}

StepResult AgentPlanRunner::notRun(int index, StepOutcome outcome, const QString &reason) const
{
    StepResult r;
    r.index = index;
    r.name = m_plan.steps.at(index).name;
    r.tool = m_plan.steps.at(index).tool;
    r.outcome = outcome;
    r.reason = reason;
    return r;
}

StepResult AgentPlanRunner::runStep(int index)
{
    if (index < 0 || index >= m_plan.steps.size())
        throw ValueError(QStringLiteral("plan '%1' has no step %2 (it has %3)")
                             .arg(m_plan.name)
                             .arg(index + 1)
                             .arg(m_plan.steps.size()));
    const PlanStep &step = m_plan.steps.at(index);
    const QString stopped = QStringLiteral("the run was stopped");
    if (m_cancelled)
        return notRun(index, StepOutcome::Cancelled, stopped);
    const AgentPtr a = agentFor(step);
    if (step.delayMs > 0) {
        if (m_options.sleeper)
            m_options.sleeper(step.delayMs);
        else
            defaultSleep(step.delayMs);
        if (m_cancelled)
            return notRun(index, StepOutcome::Cancelled,
                          stopped + QStringLiteral(" during its delay"));
    }

    StepResult r = notRun(index, StepOutcome::Ok, QString());
    QStringList errorTypes;
    const qint64 started = m_options.clock();
    try {
        const ToolCallCancelScope scope(m_cancelToken);
        const ToolResult result = a->callTool(step.tool, step.args);
        r.text = result.text;
        r.data = result.data;
        if (result.offloaded)
            r.data.insert(QStringLiteral("offloaded"), true);
    } catch (const SandboxError &e) {
        r.outcome = StepOutcome::Error;
        errorTypes = errorTypeNames(e);
        r.errorType = e.specName();
        r.errorMessage = e.message();
    } catch (const std::exception &e) {
        const ErrorDescription d = describeError(e);
        r.outcome = StepOutcome::Error;
        errorTypes = {d.type, QStringLiteral("Exception")};
        r.errorType = d.type;
        r.errorMessage = d.message;
    }
    r.durationMs = m_options.clock() - started;
    r.reason = checkExpectation(step, errorTypes, r.text, r.data, r.errorMessage);
    const BackendPtr backend = m_sandbox->backend();
    WorkspaceProbe probe;
    if (backend) {
        probe.entryState = [&backend](const QString &p) {
            return workspaceEntryState(*backend, p);
        };
        probe.namesHash = [&backend](const QString &p) { return listDirNamesHash(*backend, p); };
    }
    r.divergences = compareRecorded(step, m_plan.start.has_value(), r.errorType, r.data, probe,
                                    GlobSet(m_plan.ignore));
    if (r.reason.isEmpty() && !r.divergences.isEmpty()) {
        QStringList lines;
        for (const Divergence &d : std::as_const(r.divergences))
            lines.append(d.describe());
        r.reason =
            QStringLiteral("diverged from the recording: ") + lines.join(QStringLiteral("; "));
    }
    r.passed = r.reason.isEmpty();
    return r;
}

QList<StepResult> AgentPlanRunner::run(const std::function<void(const StepResult &)> &onStep)
{
    QList<StepResult> results;
    QString skipReason;
    for (int i = 0; i < m_plan.steps.size(); ++i) {
        StepResult r =
            !skipReason.isEmpty() ? notRun(i, StepOutcome::Skipped, skipReason) : runStep(i);
        if (!r.passed && r.outcome != StepOutcome::Skipped && r.outcome != StepOutcome::Cancelled &&
            m_plan.stopOnFailure)
            skipReason = QStringLiteral("step %1 ('%2') failed").arg(i + 1).arg(r.name);
        if (onStep)
            onStep(r);
        results.append(std::move(r));
    }
    return results;
}

} // namespace elsai
