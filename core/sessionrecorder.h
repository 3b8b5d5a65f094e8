// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "backend.h"
#include "types.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <memory>

namespace elsai {

class Sandbox;

/// The largest file whose content a recorded plan names by hash; a larger one by its size.
constexpr qint64 RecordedHashMaxBytes = 64 * 1024 * 1024;

/// "sha256:" and the hex SHA-256 of `bytes`: how a recorded plan names a content.
QString recordedHash(QByteArrayView bytes);

/// The state of one workspace path as a recorded plan's `files` expectation names it, read
/// through the backend: "sha256:<hex>" (a file's content), "size:<bytes>" (a file larger than
/// `maxBytes`), "folder", "symlink", "other" or "absent".
QString workspaceEntryState(ExecutionBackend &backend, const QString &path,
                            qint64 maxBytes = RecordedHashMaxBytes);

/// What `names_sha256` hashes for list_dir of `path`, read through the backend after the
/// call (an MCP agent's result carries the listing as text only): the names in the folder,
/// a folder's with a trailing '/', sorted, one per line. "folder of N entries" past 10,000
/// entries; "absent" when there is no such folder.
QString listDirNamesHash(ExecutionBackend &backend, const QString &path);

/// What a SessionRecorder records, and its bounds.
struct SessionRecorderOptions
{
    /// The actors whose calls are recorded; empty: every one.
    QStringList agents;
    /// The starting checkpoint's name; empty: "recording-<UTC yyyyMMdd-hhmmss>".
    QString checkpoint;
    /// The plan's name; empty: the checkpoint's.
    QString name;
    /// Paths whose changes are not recorded (nor compared by the replay: the plan's
    /// `ignore`), matched as seed excludes are: build products that differ from run to run.
    QStringList ignore = DEFAULT_WORKSPACE_POLICY_EXCLUDES;
    /// Bounds: calls past them are counted (dropped()), not recorded.
    int maxSteps = 10000;
    qint64 maxPlanBytes = 15 * 1024 * 1024; ///< below the 16 MiB a plan file may have
};

/// Records the tool calls made in a started sandbox as a scripted-agent plan (docs/agents.md,
/// "Recorded plans"): a starting checkpoint and the digest of the whole tree, then each call
/// with its arguments and what it was seen to do as expectations — the error it raised, the
/// exit code of execute, the paths it added, modified and deleted (from the change tracker),
/// the contents of the changed files by hash (read through the backend right after the call),
/// the hash of read_file's content and of list_dir's names. Volatile things (durations, times,
/// process ids, command output) are not recorded.
///
/// Every call is seen where the engine runs it (TrackedCall): MCP agents, the console,
/// scripts and scripted agents alike. Thread-safe; calls are recorded in the order they end.
/// Recording ends with stop(), the recorder's destruction or the sandbox's stop.
class SessionRecorder
{
public:
    /// Takes the starting checkpoint (a named one: the size limit never removes it) and
    /// starts observing. ValueError when the sandbox keeps no checkpoints or tracks no
    /// changes (naming --checkpoints and --track-changes); OSError when it is not started;
    /// FileExistsError when the checkpoint name is taken.
    using Options = SessionRecorderOptions;
    SessionRecorder(std::shared_ptr<Sandbox> sandbox, Options options = {});
    ~SessionRecorder(); ///< stops
    SessionRecorder(const SessionRecorder &) = delete;
    SessionRecorder &operator=(const SessionRecorder &) = delete;

    void stop(); ///< no call is recorded after it returns; idempotent
    bool isRecording() const;
    QString checkpoint() const;
    QByteArray startDigest() const; ///< treeDigest() of the starting checkpoint
    int steps() const;
    int dropped() const; ///< calls left out by the bounds

    /// The plan recorded so far (format version 2). ValueError when no call was recorded (a
    /// plan needs a step).
    QJsonObject plan() const;
    /// Writes plan() to `file` atomically (mode 0600: it holds the commands).
    void save(const QString &file) const;

private:
    struct State;
    std::shared_ptr<State> m_state;
};

} // namespace elsai
