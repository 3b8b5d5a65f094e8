// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "backend.h"
#include "firstentries.h"
#include "httpclient.h"
#include "remotetree.h"
#include "sigv4.h"
#include "treecopy.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QMap>
#include <QMutex>
#include <QString>
#include <QUrl>

#include <memory>
#include <optional>

namespace elsai::aws {

/// Configuration of AgentCore Code Interpreter sandboxes (remote-backends.md §2).
struct AgentCoreOptions
{
    QString region;          ///< AWS_REGION / AWS_DEFAULT_REGION
    Credentials credentials; ///< AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN
    /// Empty: https://bedrock-agentcore.{region}.amazonaws.com (.amazonaws.com.cn in China;
    /// AWS_ENDPOINT_URL_BEDROCK_AGENTCORE
    /// or AWS_ENDPOINT_URL override it, e.g. a loopback server in tests).
    QUrl endpoint;
    QString codeInterpreterId = QStringLiteral("aws.codeinterpreter.v1");
    int sessionTimeoutSeconds = 900; ///< the service's idle limit, 1–28800
    double timeout = 120;            ///< default command timeout, seconds
    qint64 maxOutputBytes = 100000;  ///< cap on stdout + stderr kept
    QMap<QString, QString> env;      ///< extra variables of every command
    /// HTTP deadline of calls other than execute (execute waits its timeout + a margin).
    int requestTimeoutMs = 60000;
    /// How much longer than a command's timeout execute waits for the answer before it gives
    /// up with 124 (the command's own `timeout` normally answers first).
    int executeGraceMs = 30000;
    /// Seeding: before the batched writeFiles, resolve the paths on the service (realpath) and
    /// skip those a symlink takes out of the workspace. One extra call per batch. (The file
    /// operations and execute's cwd are always confined, in the same call that uses the path.)
    bool confineSymlinks = true;
    remote::RetryPolicy retry;

    /// Everything the environment says (credentials, region, endpoint override).
    static AgentCoreOptions fromEnvironment();
    /// The endpoint to call (the override, or the region's standard endpoint).
    QUrl resolvedEndpoint() const;
    /// ValueError naming what is missing or out of range.
    void validate() const;
};

/// A SandboxBackend on one AWS Bedrock AgentCore Code Interpreter session: create() starts the
/// session, close() stops it. Files go through the readFiles / writeFiles / listFiles /
/// removeFiles tools, commands through executeCommand wrapped in a POSIX sh script that adds
/// what the service lacks: the working folder, `timeout` (124, process group killed), the
/// environment and the output cap. Every request is SigV4-signed (service bedrock-agentcore).
///
/// Paths are confined on the client side (WorkspaceFs::normalize: absolute paths and `..`
/// raise PermissionError before any request), then on the service: every file operation and
/// execute's cwd is one confined shell command (remote::confinedScript: `cd -P` per component,
/// the kernel's answer checked, the last component used without following a link); writes
/// rename a temp file over the entry. The workspace is the interpreter's working folder.
class AgentCoreSandboxBackend : public SandboxBackend, public CappedListingBackend
{
public:
    AgentCoreSandboxBackend(QString workspaceId, AgentCoreOptions options);
    ~AgentCoreSandboxBackend() override;

    QString id() const override;
    QString typeName() const override { return QStringLiteral("AgentCoreSandboxBackend"); }
    const QString &workspaceId() const { return m_workspaceId; }
    const AgentCoreOptions &options() const { return m_options; }
    /// The service's session id; empty before create() and after close().
    QString sessionId() const;

    void create() override;
    void close() override;
    bool isCreated() const override;

    QByteArray readFile(const QString &path) override;
    FileRange readFileRange(const QString &path, qint64 offset, qint64 maxBytes) override;
    bool hasRangedRead() const override { return true; }
    void writeFile(const QString &path, const QByteArray &content) override;
    QList<FileInfo> listDir(const QString &path) override;
    /// One `archive-out` of the folder, the exclusions inline or uploaded (remotefetch.h).
    bool fetchesFiles() const override { return true; }
    std::optional<QHash<QString, QByteArray>> fetchFiles(const FileFetch &fetch) override;
    CappedListing listDirFirst(const QString &path, qsizetype maxEntries,
                               qsizetype statLimit) override;
    void removeFile(const QString &path, bool recursive = false) override;
    FileInfo stat(const QString &path) override;
    void walkTree(const QString &path, bool withStat,
                  const std::function<WalkStep(const WalkEntry &)> &visit) override;
    void makeDirs(const QString &path) override;

    QList<FileTransferResult> uploadFiles(const QList<QPair<QString, QByteArray>> &files) override;
    QList<FileTransferResult> downloadFiles(const QStringList &paths) override;

    WorkspaceSeedResult seedWorkspace(const QString &source, const QStringList &excludes,
                                      const std::function<void(int, int)> &progress = {}) override;
    WorkspaceSyncResult syncArtifacts(const QString &dest, const WorkspaceSyncPolicy &policy,
                                      const std::function<void(int, int)> &progress = {}) override;
    SyncPlan planSync(const QString &dest, const WorkspaceSyncPolicy &policy) override;

    ExecuteResult execute(const QString &command, std::optional<double> timeoutSeconds = {},
                          const QString &cwd = {}, const ExecuteOptions &options = {}) override;
    double defaultTimeoutSeconds() const override { return m_options.timeout; }
    /// The service runs a command to its end: a cancel is only seen before it starts.
    bool cancelsRunningCommands() const override { return false; }

    /// Checkpoints and change tracking through remote::RemoteTree: one listing command, one
    /// tar each way (in: written beside the workspace by writeFiles; out: in the answer).
    bool supportsCheckpoints() const override { return true; }
    TreeManifest captureTree(const CaptureOptions &options) override;
    ApplyResult applyTree(const TreeManifest &current, const TreeManifest &target,
                          const CheckpointStore &store, TreeHashCache *cache) override;
    std::unique_ptr<TreeWatch> watchTree(int maxWatches) override;

    /// One decoded tool result (CodeInterpreterResult, §2.4).
    struct ToolResult
    {
        QJsonArray content;
        QJsonObject structured;
        bool isError = false;
        /// The text blocks joined: the error message when isError.
        QString text() const;
    };
    /// InvokeCodeInterpreter: one signed POST, the event stream decoded, exception frames and
    /// HTTP errors thrown as typed errors. Public for tests and diagnostics.
    ToolResult invoke(const QString &tool, const QJsonObject &arguments, int timeoutMs = -1,
                      bool retryThrottling = true);

private:
    struct Snapshot; // what planSync downloaded, reused by syncArtifacts
    struct ManifestEntry
    {
        FileStamp host;
        QByteArray sha256;
    };

    QString requireSession() const;
    /// The paths that resolve outside the workspace on the service side (symlinks), checked
    /// in one call; empty when confineSymlinks is off.
    QStringList escapingPaths(const QStringList &paths);
    /// PermissionError when one of `paths` resolves outside the workspace.
    void guardPaths(const QStringList &paths);
    remote::HttpResponse call(const QByteArray &method, const QString &path,
                              const QByteArray &query, const QJsonObject &body,
                              const remote::HttpHeaders &extraHeaders, int timeoutMs,
                              const remote::RetryPolicy &retry);
    /// Runs a script (already wrapped or not) with executeCommand; stdout, stderr, exit code.
    struct ScriptOutcome
    {
        QByteArray out;
        QByteArray err;
        int exitCode = 0;
    };
    ScriptOutcome runScript(const QString &script, int timeoutMs);
    /// Runs one operation of remote::confinedScript() with executeCommand: the path check and
    /// its use in one command. Returns the payload; throws the typed refusal.
    QByteArray confined(const QString &op, const QString &rel, const QStringList &args = {});
    /// Replaces `rel` with `content` (temp file + rename in the sandbox, never in place).
    void writeConfined(const QString &rel, const QByteArray &content);
    QList<FileTransferResult> writeBatch(const QList<QPair<QString, QByteArray>> &files);
    QHash<QString, QByteArray> readBatch(const QStringList &paths, QStringList *errors,
                                         ToolResult *raw = nullptr);
    Snapshot snapshot(const QString &dest, const WorkspaceSyncPolicy &policy);
    /// RemoteTree's transport: the confined operations, input written by writeFiles.
    remote::TreeTransport treeTransport();

    const QString m_workspaceId;
    const AgentCoreOptions m_options;
    const SigV4Signer m_signer;
    mutable QMutex m_mutex;
    QString m_sessionId;
    /// Conflict detection base of flushes: host root, then path → host stamp and content hash
    /// as last seeded or flushed. Guarded by m_manifestMutex, which serializes flushes.
    QString m_manifestRoot;
    QHash<QString, ManifestEntry> m_manifest;
    QMutex m_manifestMutex;
    remote::RemoteTree m_tree;
};

/// Builds one AgentCore backend (one interpreter session) per workspace id; a second build for
/// a workspace id whose backend is still alive returns the same backend (spec:
/// AgentCoreSandboxTemplate).
class AgentCoreSandboxTemplate : public BackendTemplate
{
public:
    explicit AgentCoreSandboxTemplate(
        AgentCoreOptions options = AgentCoreOptions::fromEnvironment());
    QString typeName() const override { return QStringLiteral("AgentCoreSandboxBackend"); }
    BackendPtr buildForSession(const QString &sessionId) override;
    BackendPtr buildDefault() override;
    const AgentCoreOptions &options() const { return m_options; }

private:
    AgentCoreOptions m_options;
    QMutex m_mutex;
    QHash<QString, std::weak_ptr<AgentCoreSandboxBackend>> m_backends;
};

} // namespace elsai::aws
