// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QList>
#include <QString>
#include <QStringList>

#include <memory>

namespace elsai {

/// One gitignore-style pattern (rules in docs/sync.md, "Glob rules"):
/// - `*` matches any run of characters except `/`; `?` one character except `/`;
///   `[abc]`, `[a-z]`, `[!a]` / `[^a]` a character class (never `/`); `\x` a literal x.
/// - `**` as a whole segment matches zero or more folders (`a/**/b`, `**/x`, `dist/**`).
/// - A pattern with no `/` except a trailing one matches a name at any depth; otherwise it is
///   anchored at the root (a leading `/` only anchors).
/// - A trailing `/` matches folders only.
/// - Matching is O(len(path) × len(pattern)) — no exponential backtracking.
/// Immutable after construction and safe to share between threads.
class GlobPattern
{
public:
    explicit GlobPattern(const QString &pattern);
    ~GlobPattern();
    GlobPattern(const GlobPattern &);
    GlobPattern &operator=(const GlobPattern &);

    const QString &pattern() const;
    bool isValid() const;       ///< false for an empty pattern or an unclosed `[`
    bool directoryOnly() const; ///< the pattern ended with `/`

    /// Does the pattern match this workspace-relative path itself (`a/b/c`, no leading `/`)?
    bool matches(QStringView relPath, bool isDir) const;
    /// True when `relPath` or one of its parent folders matches (parents count as folders).
    /// One linear pass, not one match per parent.
    bool matchesPathOrParent(QStringView relPath, bool isDir) const;

private:
    struct Data;
    std::shared_ptr<const Data> d;
};

/// A list of patterns, as used for seed excludes and sync includes.
class GlobSet
{
public:
    GlobSet() = default;
    explicit GlobSet(const QStringList &patterns);

    bool isEmpty() const { return m_patterns.isEmpty(); }
    const QList<GlobPattern> &patterns() const { return m_patterns; }

    /// Index of the first pattern that matches `relPath` itself, or -1.
    int matchIndex(QStringView relPath, bool isDir) const;
    bool matches(QStringView relPath, bool isDir) const { return matchIndex(relPath, isDir) >= 0; }

    /// Like gitignore: true when the path or any of its parent folders matches.
    /// A folder matched by `dist/**` or `src` makes everything below it match.
    bool matchesPathOrParent(QStringView relPath, bool isDir) const;

private:
    QList<GlobPattern> m_patterns;
};

} // namespace elsai
