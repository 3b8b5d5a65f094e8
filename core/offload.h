// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "folderclaims.h"
#include "types.h"

#include <QDir>
#include <QHash>
#include <QMutex>
#include <QString>
#include <QStringList>

#include <memory>
#include <optional>

namespace elsai {

/// Where offloaded tool results go. Thread-safe.
class OffloadStorage
{
public:
    virtual ~OffloadStorage();
    virtual QString typeName() const = 0;
    /// Stores `content` and returns its handle.
    virtual QString store(const QString &content) = 0;
    /// The content of a handle, or none when unknown.
    virtual std::optional<QString> retrieve(const QString &handle) = 0;
};
using OffloadStoragePtr = std::shared_ptr<OffloadStorage>;

class InMemoryStorage : public OffloadStorage
{
public:
    QString typeName() const override { return QStringLiteral("InMemoryStorage"); }
    QString store(const QString &content) override;
    std::optional<QString> retrieve(const QString &handle) override;

private:
    QMutex m_mutex;
    QHash<QString, QString> m_items;
};

/// One file per result under a folder (created when missing), written atomically.
/// The folder is opened once, at construction, and every file is created and read beneath that
/// descriptor (one component, O_NOFOLLOW): replacing the folder or a file with a link later
/// cannot redirect a write or a read. Handles are random hex names, so a handle cannot name a
/// path outside the folder. The folder may not be inside a workspace (FolderClaim): the
/// constructor, or a workspace opened later around it, throws ValueError naming both.
class FileStorage : public OffloadStorage
{
public:
    explicit FileStorage(const QString &directory);
    ~FileStorage() override;
    FileStorage(const FileStorage &) = delete;
    FileStorage &operator=(const FileStorage &) = delete;
    QString typeName() const override { return QStringLiteral("FileStorage"); }
    QString store(const QString &content) override;
    std::optional<QString> retrieve(const QString &handle) override;
    QString directory() const { return m_path; }

private:
    QString m_path;
    int m_dirFd = -1;
    FolderClaim m_claim;
};

/// Token counting used by the offload policy: one token per 4 bytes of UTF-8, rounded up.
/// Deterministic and model-independent; close to common BPE tokenizers on code and English.
qint64 countTokens(const QString &text);
/// The longest prefix of `text` of at most `tokens` tokens, cut at a character boundary.
QString truncateToTokens(const QString &text, qint64 tokens);

/// Offload of large sandbox tool results (spec: SandboxOutputOffloadPolicy).
struct SandboxOutputOffloadPolicy
{
    OffloadStoragePtr storage;
    qint64 maxResultTokens = 2500;
    qint64 previewTokens = 1000;
    bool includeRetrievalTool = true;
    QStringList toolNames = SANDBOX_OFFLOAD_TOOL_NAMES;

    /// When `text` is above maxResultTokens: stores it and returns the preview text with the
    /// handle and how to retrieve the rest; otherwise none.
    std::optional<QString> offload(const QString &text, QString *handle = nullptr) const;
};

} // namespace elsai
