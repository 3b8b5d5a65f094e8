// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "localsandboxbackend.h"

#include "errors.h"
#include "fdutil.h"
#include "firstentries.h"
#include "flushbase.h"
#include "folderoverlap.h"
#include "glob.h"
#include "inputchecks.h"
#include "tempfiles.h"
#include "workspacefs.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QProcessEnvironment>
#include <QSet>

#include <cmath>

#include <fcntl.h>
#include <unistd.h>

namespace elsai {

namespace {

/// Temp files an interrupted flush left on the host, in the folders this flush writes to
/// (not the whole host tree: it is the user's project, possibly huge).
void removeStaleFlushTemps(const QString &root, const SyncPlan &plan)
{
    if (!QFileInfo(root).isDir())
        return;
    QSet<QString> folders;
    for (const SyncPlanEntry &e : plan.entries)
        folders.insert(QFileInfo(e.path).path());
    try {
        const WorkspaceFs dest(root);
        for (const QString &folder : std::as_const(folders)) {
            try {
                const UniqueFd fd(dest.openDirectory(folder));
                removeStaleTempFiles(fd.get(), false);
            } catch (const SandboxError &) {
                // missing or refused: nothing of ours to clean there
            }
        }
    } catch (const SandboxError &) {
    }
}

} // namespace

namespace {

/// Parsing the engine's environment and merging the options into it cost about a third of the
/// engine's own work per execute("true"): done once per backend.
QStringList makeBaseEnvironment(const LocalSandboxBackend::Options &options)
{
    QProcessEnvironment env =
        options.inheritEnv ? QProcessEnvironment::systemEnvironment() : QProcessEnvironment();
    for (auto it = options.env.cbegin(); it != options.env.cend(); ++it)
        env.insert(it.key(), it.value());
    if (!env.contains(QStringLiteral("PATH")))
        env.insert(QStringLiteral("PATH"), QStringLiteral("/usr/local/bin:/usr/bin:/bin"));
    return env.toStringList();
}

} // namespace

LocalSandboxBackend::LocalSandboxBackend(const QString &workspaceRoot, Options options)
    : m_root(QDir(workspaceRoot).absolutePath()), m_options(std::move(options))
{
    if (workspaceRoot.isEmpty())
        throw ValueError(QStringLiteral("LocalSandboxBackend needs a workspace_root"));
    if (!(m_options.timeout > 0) || !std::isfinite(m_options.timeout))
        throw ValueError(QStringLiteral("timeout must be a positive number of seconds, got %1")
                             .arg(m_options.timeout));
    if (m_options.maxOutputBytes < 0)
        throw ValueError(
            QStringLiteral("max_output_bytes must be >= 0, got %1").arg(m_options.maxOutputBytes));
    checkNoNul(workspaceRoot, QStringLiteral("workspace root"));
    checkEnvironment(m_options.env);
    m_baseEnvironment = makeBaseEnvironment(m_options);
}

LocalSandboxBackend::LocalSandboxBackend(const QString &workspaceRoot)
    : LocalSandboxBackend(workspaceRoot, Options())
{
}

LocalSandboxBackend::~LocalSandboxBackend() = default;

QString LocalSandboxBackend::id() const
{
    return QStringLiteral("local:") + m_root;
}

void LocalSandboxBackend::create()
{
    QMutexLocker lock(&m_mutex);
    if (!m_fs) {
        m_fs = std::make_shared<WorkspaceFs>(m_root);
        // A crash in the middle of an atomic write leaves its temp file; never its target.
        removeStaleTempFiles(m_fs->rootFd(), true);
        // An existing workspace brings the flush bases of an earlier run; bases of workspace
        // folders deleted since are dropped.
        removeOrphanFlushBases(m_root);
        QMutexLocker manifestLock(&m_manifestMutex);
        if (m_manifests.isEmpty()) {
            QString error;
            if (auto bases = loadFlushBases(m_root, &error)) {
                m_manifests = std::move(bases->manifests);
                m_seedRoot = bases->seedRoot;
            } else if (!error.isEmpty()) {
                // without it a flush has no base: the safe no-base rule applies
                qWarning("%s", qPrintable(error));
            }
        }
    }
}

QString LocalSandboxBackend::saveBases()
{
    try {
        saveFlushBases(m_root, {m_manifests, m_seedRoot});
    } catch (const SandboxError &e) {
        return QStringLiteral("the flush base was not saved (%1): a flush after a restart will "
                              "treat every file as having no base")
            .arg(e.message());
    }
    return {};
}

void LocalSandboxBackend::close()
{
    QMutexLocker lock(&m_mutex);
    m_fs.reset(); // calls in flight keep their reference; the folder stays on disk
}

bool LocalSandboxBackend::isCreated() const
{
    QMutexLocker lock(&m_mutex);
    return m_fs != nullptr;
}

std::shared_ptr<WorkspaceFs> LocalSandboxBackend::fs() const
{
    QMutexLocker lock(&m_mutex);
    if (!m_fs)
        throw OSError(QStringLiteral("the local workspace '%1' is closed; start the sandbox "
                                     "first")
                          .arg(m_root));
    return m_fs;
}

QByteArray LocalSandboxBackend::readFile(const QString &path)
{
    return fs()->readFile(path);
}

FileRange LocalSandboxBackend::readFileRange(const QString &path, qint64 offset, qint64 maxBytes)
{
    FileRange range;
    range.data = fs()->readRange(path, offset, maxBytes, &range.totalSize);
    return range;
}

void LocalSandboxBackend::writeFile(const QString &path, const QByteArray &content)
{
    fs()->writeFile(path, content);
}

QList<FileInfo> LocalSandboxBackend::listDir(const QString &path)
{
    return fs()->listDir(path);
}

QList<FileInfo> LocalSandboxBackend::listDirBrief(const QString &path, qsizetype statLimit)
{
    return fs()->listDir(path, statLimit);
}

DirListing LocalSandboxBackend::listDirCompact(const QString &path, qsizetype statLimit)
{
    return fs()->listDirCompact(path, statLimit);
}

CappedListing LocalSandboxBackend::listDirFirst(const QString &path, qsizetype maxEntries,
                                                qsizetype statLimit)
{
    CappedListing out;
    out.listing =
        fs()->listDirFirst(path, qMax<qsizetype>(0, maxEntries), statLimit, &out.totalEntries);
    return out;
}

void LocalSandboxBackend::removeFile(const QString &path, bool recursive)
{
    fs()->remove(path, recursive);
}

FileInfo LocalSandboxBackend::stat(const QString &path)
{
    return fs()->stat(path);
}

void LocalSandboxBackend::makeDirs(const QString &path)
{
    fs()->makeDirs(path);
}

void LocalSandboxBackend::rename(const QString &source, const QString &dest, bool overwrite)
{
    const auto ws = fs();
    if (ws->exists(dest) && ws->stat(dest).type == FileInfo::Type::Directory)
        throw IsADirectoryError(
            QStringLiteral("cannot move onto '%1': it is a folder, which a move never replaces")
                .arg(dest),
            EISDIR);
    ws->rename(source, dest, overwrite);
}

std::optional<SeedManifest> LocalSandboxBackend::seedManifest() const
{
    QMutexLocker lock(&m_manifestMutex);
    return m_manifests.value(m_seedRoot);
}

WorkspaceSeedResult
LocalSandboxBackend::seedWorkspace(const QString &source, const QStringList &excludes,
                                   const std::function<void(int, int)> &progress)
{
    requireSeparateFolders(QStringLiteral("seed_from"), source, QStringLiteral("workspace folder"),
                           m_root);
    const auto ws = fs();
    const QString root = QDir(source).absolutePath();
    const SeedPlan plan = planSeed(root, GlobSet(excludes));
    SeedManifest manifest;
    manifest.hostRoot = root;
    WorkspaceSeedResult r = executeSeed(plan, *ws, &manifest, progress);
    QMutexLocker lock(&m_manifestMutex);
    m_manifests.insert(root, std::move(manifest));
    m_seedRoot = root;
    if (const QString error = saveBases(); !error.isEmpty())
        r.errors << error;
    return r;
}

static GlobSet includesOf(const WorkspaceSyncPolicy &policy)
{
    return GlobSet(policy.syncIncludePatterns.value_or(DEFAULT_SANDBOX_SYNC_INCLUDE));
}

SyncPlan LocalSandboxBackend::planSync(const QString &dest, const WorkspaceSyncPolicy &policy)
{
    requireSeparateFolders(QStringLiteral("flush destination"), dest,
                           QStringLiteral("workspace folder"), m_root);
    const auto ws = fs();
    const QString root = QDir(dest).absolutePath();
    QMutexLocker lock(&m_manifestMutex);
    const auto it = m_manifests.constFind(root);
    return elsai::planSync(*ws, root, includesOf(policy), GlobSet(policy.excludePatterns),
                           it == m_manifests.constEnd() ? nullptr : &*it, policy.noBaseConflict);
}

WorkspaceSyncResult
LocalSandboxBackend::syncArtifacts(const QString &dest, const WorkspaceSyncPolicy &policy,
                                   const std::function<void(int, int)> &progress)
{
    requireSeparateFolders(QStringLiteral("flush destination"), dest,
                           QStringLiteral("workspace folder"), m_root);
    const auto ws = fs();
    const QString root = QDir(dest).absolutePath();
    // One flush at a time per workspace: the manifest is read and updated by it.
    QMutexLocker lock(&m_manifestMutex);
    const auto known = m_manifests.find(root);
    // A destination without a record has no base: the policy's no-base rule decides there. It
    // gets one once something was written to it.
    SeedManifest fresh;
    fresh.hostRoot = root;
    SeedManifest &manifest = known != m_manifests.end() ? *known : fresh;
    const SyncPlan plan =
        elsai::planSync(*ws, root, includesOf(policy), GlobSet(policy.excludePatterns),
                        known != m_manifests.end() ? &manifest : nullptr, policy.noBaseConflict);
    removeStaleFlushTemps(root, plan);
    WorkspaceSyncResult r = executeSync(plan, *ws, &manifest, progress);
    // the base moved for what was written, and for what converged (same bytes on both sides)
    if (r.added.isEmpty() && r.updated.isEmpty() && convergedPaths(plan).isEmpty())
        return r;
    if (known == m_manifests.end())
        m_manifests.insert(root, std::move(fresh));
    if (const QString error = saveBases(); !error.isEmpty())
        r.errors << error;
    return r;
}

TreeManifest LocalSandboxBackend::captureTree(const CaptureOptions &options)
{
    const auto ws = fs();
    TreeManifest m = elsai::captureTree(ws->rootFd(), options);
    m.source = id();
    return m;
}

ApplyResult LocalSandboxBackend::applyTree(const TreeManifest &current, const TreeManifest &target,
                                           const CheckpointStore &store, TreeHashCache *cache)
{
    const auto ws = fs();
    const ApplyResult r = elsai::applyTree(ws->rootFd(), current, target, store, cache);
    // durable once, as a seed is (executeSeed): a restore a crash interrupts is finished from
    // its journal, not trusted half-way
    const UniqueFd root(::openat(ws->rootFd(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!root.isValid() || ::syncfs(root.get()) != 0)
        throwOsError(errno, QStringLiteral("cannot flush the restored workspace to disk"), m_root);
    return r;
}

std::unique_ptr<TreeWatch> LocalSandboxBackend::watchTree(int maxWatches)
{
    // a bwrap command writes the same folder (bound at /workspace): one watch serves both
    return std::make_unique<InotifyTreeWatch>(fs()->rootFd(), maxWatches);
}

ExecuteResult LocalSandboxBackend::execute(const QString &command,
                                           std::optional<double> timeoutSeconds, const QString &cwd,
                                           const ExecuteOptions &options)
{
    const std::unique_ptr<RunningCommand> running =
        startCommand(command, timeoutSeconds, cwd, options);
    running->waitFor(-1);
    return running->takeResult();
}

std::unique_ptr<RunningCommand>
LocalSandboxBackend::startCommand(const QString &command, std::optional<double> timeoutSeconds,
                                  const QString &cwd, const ExecuteOptions &options)
{
    checkExecuteInput(command, cwd, options.env);
    checkCommandFits(command, MaxArgumentBytes, QStringLiteral("local backend"));
    const auto ws = fs();
    if (options.readOnlyWorkspace)
        throw PermissionError(QStringLiteral("the local backend cannot run a command with a "
                                             "read-only workspace (it does not isolate commands); "
                                             "use the bwrap backend or a read-write agent"));
    const double timeout = timeoutSeconds.value_or(m_options.timeout);
    if (!(timeout > 0) || !std::isfinite(timeout))
        throw ValueError(QStringLiteral("timeout must be a positive number of seconds"));

    ProcessSpec spec;
    spec.command = command;
    // Round up: a tiny timeout must still be a timeout (0 would mean "none").
    spec.timeoutMs = static_cast<int>(std::clamp(std::ceil(timeout * 1000.0), 1.0, 2e9));
    spec.killGraceMs = m_options.killGraceMs;
    spec.maxOutputBytes = m_options.maxOutputBytes;
    spec.onOutput = options.onOutput;
    spec.cancel = options.cancel;
    spec.stdinFd = options.stdinFd;
    spec.streamOnly = options.streamOnly;
    QStringList env = baseEnvironment();
    for (auto it = options.env.cbegin(); it != options.env.cend(); ++it)
        env.append(it.key() + QLatin1Char('=') + it.value());
    spec.environment = env;
    // Only the child uses it, before its exec: closed once the command started. The
    // workspace's own root fd (O_PATH, which fchdir takes) saves opening one per command.
    UniqueFd cwdFd;
    if (cwd.isEmpty()) {
        spec.cwdFd = ws->rootFd();
    } else {
        cwdFd.reset(ws->openDirectory(cwd));
        spec.cwdFd = cwdFd.get();
    }
    return startProcess(std::move(spec));
}

/// A RunningProcess whose process group is listed by its backend while it runs.
class LocalRunningCommand final : public RunningCommand
{
public:
    LocalRunningCommand(LocalSandboxBackend &backend, std::shared_ptr<void> keep)
        : m_backend(backend), m_keep(std::move(keep))
    {
    }
    ~LocalRunningCommand() override
    {
        m_process.reset(); // kills what still runs
        forgetGroup();
    }

    void start(ProcessSpec spec)
    {
        spec.onStarted = [this](qint64 pgid) {
            QMutexLocker lock(&m_backend.m_mutex);
            m_group = pgid;
            m_backend.m_groups.append(pgid);
        };
        m_process.emplace(std::move(spec));
    }

    bool waitFor(int timeoutMs) override
    {
        if (!m_process->waitFor(timeoutMs))
            return false;
        forgetGroup();
        return true;
    }

    ExecuteResult takeResult() override { return toExecuteResult(m_process->takeOutcome()); }

private:
    void forgetGroup()
    {
        QMutexLocker lock(&m_backend.m_mutex);
        if (m_group)
            m_backend.m_groups.removeOne(m_group);
        m_group = 0;
    }

    LocalSandboxBackend &m_backend;
    std::shared_ptr<void> m_keep;
    qint64 m_group = 0; // guarded by the backend's m_mutex
    std::optional<RunningProcess> m_process;
};

std::unique_ptr<RunningCommand> LocalSandboxBackend::startProcess(ProcessSpec spec,
                                                                  std::shared_ptr<void> keep)
{
    auto running = std::make_unique<LocalRunningCommand>(*this, std::move(keep));
    running->start(std::move(spec));
    return running;
}

QList<qint64> LocalSandboxBackend::runningProcessGroups() const
{
    QMutexLocker lock(&m_mutex);
    return m_groups;
}

} // namespace elsai
