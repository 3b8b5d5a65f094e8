// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "backend.h"
#include "types.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace elsai {

/// Where a search looks (grep, glob, tree): a workspace folder, glob filters, and the seed
/// excludes it skips (docs/tools.md, "What the search tools skip").
///
/// Globs follow the seed/sync rules (glob.h) and are matched against the path relative to
/// `path`: `*.py` matches at any depth, `src/**/*.ts` below `path`/src. An entry whose path
/// relative to `path` — or one of its folders — matches a `skip` pattern is not visited: the
/// seed excludes keep .git, node_modules, secrets and keys out of results unless the search
/// names such a folder as its `path` or asks for them (include_excluded).
struct SearchScope
{
    QString path = QStringLiteral(".");
    QStringList include; ///< files must match one (empty: every file)
    QStringList exclude; ///< files and folders that match one are skipped
    QStringList skip;    ///< the seed excludes in force (empty: nothing skipped)
    /// The most entries one search visits; the result then says it stopped early.
    qint64 maxEntriesVisited = 200000;
};

/// What grep returns for each match it shows.
enum class GrepOutput { Content, FilesWithMatches, Count };

struct GrepRequest
{
    SearchScope scope;
    QString pattern; ///< a PCRE2 regular expression, matched line by line
    bool caseInsensitive = false;
    int contextBefore = 0;
    int contextAfter = 0;
    GrepOutput output = GrepOutput::Content;
    /// Matching lines (Content), files (FilesWithMatches) or files with counts (Count).
    int maxResults = 200;
    /// Larger files are skipped (counted in `skippedLarge`).
    qint64 maxFileBytes = 8 * 1024 * 1024;
    /// Remote backends (ExecutionBackend::fetchesFiles()): the most listed bytes of the files
    /// to search that one search fetches; a larger search is refused (ValueError, saying how
    /// to narrow it). An agent controls what the tree holds.
    qint64 maxFetchBytes = 64 * 1024 * 1024;
};

struct GrepLine
{
    qint64 line = 0;   ///< 1-based
    QString text;      ///< without its line end; long lines are cut (see MaxGrepLineChars)
    bool match = true; ///< false for a context line
};

struct GrepFile
{
    QString path;
    qint64 count = 0;      ///< matching lines (Count; in Content: those shown)
    QList<GrepLine> lines; ///< Content only: matches and their context, in order
};

struct GrepResult
{
    QList<GrepFile> files;
    /// More matches exist than maxResults let through (the marker the agent sees).
    bool more = false;
    /// The walk ended at maxEntriesVisited: files beyond were not searched.
    bool stoppedEarly = false;
    qint64 filesSearched = 0;
    qint64 matchingLines = 0; ///< shown
    qint64 skippedBinary = 0;
    qint64 skippedLarge = 0;
    qint64 skippedUnreadable = 0;
};

/// The longest line text grep returns; a longer line is cut with a note of its length.
constexpr qsizetype MaxGrepLineChars = 500;

/// Searches files beneath scope.path (or the one file it names). ValueError for an invalid
/// pattern (naming the position) and for one that needs unbounded backtracking on some line
/// (the PCRE2 match limit ends it; the message names the file and line). Binary files (a NUL
/// in the first 8 KiB) are skipped. Reads through the backend's ranged read (local backends:
/// the confined WorkspaceFs directly, batches of files on several threads, merged in the
/// walk's order so the result is the sequential one), or, where the backend fetchesFiles() (the
/// remote ones), lists the folder once and fetches the files to search in one archive (bounded by
/// maxFetchBytes; OSError when they grew past their listed sizes meanwhile).
GrepResult grepWorkspace(ExecutionBackend &backend, const GrepRequest &request);

/// The text form of a grep result: `path:line:text` for matches, `path-line-text` for
/// context, `--` between groups; `path` per file; `path:count`; then the markers.
QString formatGrep(const GrepRequest &request, const GrepResult &result);

enum class GlobOrder { Newest, Path };

struct GlobRequest
{
    SearchScope scope; ///< scope.include holds the patterns asked for
    GlobOrder order = GlobOrder::Newest;
    int maxResults = 500;
};

struct GlobResult
{
    QList<WalkEntry> files;
    bool more = false;
    bool stoppedEarly = false;
    qint64 matched = 0; ///< all matches found (files holds the first maxResults)
};

/// Files (and symlinks) beneath scope.path matching one of scope.include; newest first (the
/// order needs each match's modification time) or by path.
GlobResult globWorkspace(ExecutionBackend &backend, const GlobRequest &request);

struct TreeRequest
{
    SearchScope scope;
    int maxDepth = 3;
    int maxEntries = 500;
};

struct TreeResult
{
    QString text; ///< indented, folders end with '/', files show their size
    QList<WalkEntry> entries;
    bool more = false;
    qint64 excludedFolders = 0; ///< listed but not entered (seed excludes)
};

/// What a listing line shows after an entry's name: `/` for a folder, ` (symlink)`,
/// ` (special file)`, or a file's ` (N bytes)` when its size is known (list_dir, tree).
void appendEntryKind(QString &out, FileInfo::Type type, const std::optional<qint64> &size);

/// The folder's entries to maxDepth as an indented outline.
TreeResult treeWorkspace(ExecutionBackend &backend, const TreeRequest &request);

} // namespace elsai
