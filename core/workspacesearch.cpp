// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "workspacesearch.h"

#include "errors.h"
#include "glob.h"
#include "parallel.h"
#include "workspacefs.h"

#include <QHash>
#include <QRegularExpression>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <exception>
#include <optional>
#include <vector>

namespace elsai {

namespace {

/// The PCRE2 match limit of one match call: agents' patterns must not backtrack without end
/// (`(a+)+$` on a long line). Plenty for any pattern that is linear in its line.
constexpr int RegexMatchLimit = 1000000;
/// Bytes read to tell a binary file (a NUL among them) from a text file.
constexpr qsizetype BinaryProbeBytes = 8192;

QStringList checkedGlobs(const QStringList &patterns, const char *what)
{
    for (const QString &p : patterns) {
        if (!GlobPattern(p).isValid())
            throw ValueError(QStringLiteral("%1 glob '%2' is not valid (empty, or an unclosed '[')")
                                 .arg(QLatin1String(what), p));
    }
    return patterns;
}

/// The walk every search tool shares: the scope's folder, its filters, the seed excludes and
/// the bound on entries visited.
class ScopedWalk
{
public:
    explicit ScopedWalk(const SearchScope &scope)
        : m_scope(scope), m_root(WorkspaceFs::normalize(scope.path)),
          m_include(checkedGlobs(scope.include, "include")),
          m_exclude(checkedGlobs(scope.exclude, "exclude")), m_skip(scope.skip)
    {
    }

    /// The path relative to the search folder.
    QStringView relative(const QString &path) const
    {
        return m_root.isEmpty() ? QStringView(path) : QStringView(path).mid(m_root.size() + 1);
    }
    bool included(QStringView rel) const
    {
        return m_include.isEmpty() || m_include.matches(rel, false);
    }
    const GlobSet &include() const { return m_include; }
    const QString &root() const { return m_root; }
    bool stoppedEarly() const { return m_stoppedEarly; }
    qint64 skippedFolders() const { return m_skippedFolders; }

    /// Visits the files (and, with `folders`, the folders) in scope; `visit` returns false to
    /// stop. Excluded folders are not entered.
    template<typename Visit>
    void run(ExecutionBackend &backend, bool withStat, Visit visit,
             const std::function<bool(const WalkEntry &)> &enter = {})
    {
        qint64 visited = 0;
        backend.walkTree(m_scope.path, withStat, [&](const WalkEntry &e) {
            if (++visited > m_scope.maxEntriesVisited) {
                m_stoppedEarly = true;
                return WalkStep::Stop;
            }
            const QStringView rel = relative(e.path);
            const bool dir = e.type == FileInfo::Type::Directory;
            if (m_skip.matches(rel, dir) || m_exclude.matches(rel, dir)) {
                m_skippedFolders += dir ? 1 : 0;
                return visit(e, true) ? WalkStep::SkipFolder : WalkStep::Stop;
            }
            if (!visit(e, false))
                return WalkStep::Stop;
            if (dir && enter && !enter(e))
                return WalkStep::SkipFolder;
            return WalkStep::Continue;
        });
    }

private:
    const SearchScope &m_scope;
    QString m_root;
    GlobSet m_include;
    GlobSet m_exclude;
    GlobSet m_skip;
    bool m_stoppedEarly = false;
    qint64 m_skippedFolders = 0;
};

QRegularExpressionMatch matchIn(const QRegularExpression &re, QStringView text, qsizetype offset)
{
#if QT_VERSION >= QT_VERSION_CHECK(6, 5, 0)
    return re.matchView(text, offset);
#else
    return re.match(text, offset);
#endif
}

/// True when a pattern may match a line alone but not the same text inside the whole file
/// (lookaround, subject anchors): such patterns are matched line by line only.
bool needsLineByLine(const QString &pattern)
{
    static const char *const markers[] = {"(?=", "(?!", "(?<=", "(?<!", "\\A",
                                          "\\z", "\\Z", "\\G",  "\\K"};
    return std::any_of(std::begin(markers), std::end(markers),
                       [&](const char *m) { return pattern.contains(QLatin1String(m)); });
}

[[noreturn]] void throwBacktracking(const QString &path, qint64 line)
{
    throw ValueError(QStringLiteral("grep: the pattern needs too much backtracking on line %1 of "
                                    "'%2' (the regex match limit ended it); rewrite it without "
                                    "nested repetition such as (a+)+ or (a|a)*")
                         .arg(line)
                         .arg(path));
}

QString cutLine(QStringView line)
{
    if (line.endsWith(u'\n'))
        line.chop(1);
    if (line.endsWith(u'\r'))
        line.chop(1);
    if (line.size() <= MaxGrepLineChars)
        return line.toString();
    return line.first(MaxGrepLineChars).toString() +
           QStringLiteral(" …[line cut: %1 characters]").arg(line.size());
}

/// Matches `re` against each line of `text`, calling `onLine(start, end, number)` for each
/// matching line until it returns false.
template<typename OnLine>
void matchLines(const QRegularExpression &re, bool lineByLine, const QString &text,
                const QString &path, OnLine onLine)
{
    qsizetype pos = 0;
    qint64 lineNo = 1;
    const qsizetype n = text.size();
    const auto lineEnd = [&](qsizetype start) {
        const qsizetype nl = text.indexOf(u'\n', start);
        return nl < 0 ? n : nl;
    };
    while (pos < n) {
        qsizetype start = pos;
        if (!lineByLine) {
            // One search over the rest of the file finds the next line that can match; the
            // line is then matched alone (the per-line meaning of ^, $ and classes).
            const QRegularExpressionMatch m = matchIn(re, text, pos);
            if (!m.isValid()) {
                lineByLine = true; // the whole-file search hit the limit: go line by line
                continue;
            }
            if (!m.hasMatch())
                return;
            const qsizetype at = m.capturedStart();
            start = at == 0 ? 0 : text.lastIndexOf(u'\n', at - 1) + 1;
            if (start < pos)
                start = pos;
            lineNo += std::count(text.constData() + pos, text.constData() + start, u'\n');
            const qsizetype end = lineEnd(start);
            if (at >= start && m.capturedEnd() <= end) {
                // Inside its line: the line alone matches too (no lookaround, no subject
                // anchors here; ^, $ and \b see a line end as they see the subject's end).
                if (!onLine(start, end, lineNo))
                    return;
                if (end >= n)
                    return;
                pos = end + 1;
                ++lineNo;
                continue;
            }
        }
        const qsizetype end = lineEnd(start);
        const QRegularExpressionMatch m = matchIn(re, QStringView(text).mid(start, end - start), 0);
        if (!m.isValid())
            throwBacktracking(path, lineNo);
        if (m.hasMatch() && !onLine(start, end, lineNo))
            return;
        if (end >= n)
            return;
        pos = end + 1;
        ++lineNo;
    }
}

/// The refusal of a remote search whose files add up to more than GrepRequest::maxFetchBytes.
QString fetchTooLarge(const GrepRequest &request, qsizetype files, qint64 bytes)
{
    const auto mib = [](qint64 b) { return QString::number(double(b) / (1024 * 1024), 'f', 1); };
    return QStringLiteral("grep: the %1 files to search under '%2' hold %3 MiB, more than one "
                          "search fetches from this remote sandbox (%4 MiB); narrow the path, "
                          "give include globs (such as *.py) or exclude globs for generated and "
                          "vendored folders, or search inside the sandbox with execute")
        .arg(files)
        .arg(request.scope.path, mib(bytes), mib(request.maxFetchBytes));
}

/// One file's search, done on any thread; merged into the result in the walk's order.
struct FileScan
{
    enum class Status { Searched, Large, Binary, Unreadable };
    Status status = Status::Searched;
    GrepFile file;            ///< Content: the first `budget` matches, with their context
    int budget = 0;           ///< the matching lines it could show (Content)
    bool overBudget = false;  ///< Content: another match came after the budget
    std::exception_ptr error; ///< the pattern's failure on this file, raised when merged
};

/// Matches the bytes of one file (at most maxFileBytes + 1 of them).
FileScan scanData(const GrepRequest &request, const QRegularExpression &re, bool lineByLine,
                  const QString &path, const QByteArray &data, int budget)
{
    FileScan scan;
    scan.budget = budget;
    if (data.size() > request.maxFileBytes) {
        scan.status = FileScan::Status::Large;
        return scan;
    }
    if (QByteArrayView(data).first(qMin(data.size(), BinaryProbeBytes)).contains('\0')) {
        scan.status = FileScan::Status::Binary;
        return scan;
    }
    const QString text = QString::fromUtf8(data);
    GrepFile &file = scan.file;
    file.path = path;
    QList<std::pair<qsizetype, qint64>> hits; // line start, number (Content)
    matchLines(re, lineByLine, text, path, [&](qsizetype start, qsizetype, qint64 lineNo) {
        switch (request.output) {
        case GrepOutput::FilesWithMatches:
            file.count = 1;
            return false;
        case GrepOutput::Count:
            ++file.count;
            return true;
        case GrepOutput::Content:
            if (file.count == budget) {
                scan.overBudget = true;
                return false;
            }
            ++file.count;
            hits.append({start, lineNo});
            return true;
        }
        return true;
    });
    if (request.output != GrepOutput::Content || hits.isEmpty())
        return scan;
    // the matches with their context, each line once, in order
    const qint64 before = request.contextBefore, after = request.contextAfter;
    QList<qsizetype> starts{0};
    if (before > 0 || after > 0) {
        for (qsizetype i = text.indexOf(u'\n'); i >= 0 && i + 1 <= text.size();
             i = text.indexOf(u'\n', i + 1))
            starts.append(i + 1);
        if (starts.size() > 1 && starts.last() == text.size())
            starts.removeLast(); // a final line end starts no line
    }
    const auto lineText = [&](qint64 number) {
        const qsizetype s = starts.at(number - 1);
        const qsizetype e = number < starts.size() ? starts.at(number) - 1 : text.size();
        return cutLine(QStringView(text).mid(s, e - s));
    };
    qint64 emitted = 0; // the last line number emitted
    for (const auto &[start, number] : std::as_const(hits)) {
        if (before > 0 || after > 0) {
            for (qint64 l = qMax(emitted + 1, number - before); l < number; ++l)
                file.lines.append({l, lineText(l), false});
        }
        if (number > emitted) {
            const qsizetype end = text.indexOf(u'\n', start);
            file.lines.append(
                {number,
                 cutLine(QStringView(text).mid(start, (end < 0 ? text.size() : end) - start)),
                 true});
            emitted = number;
        }
        // context after this match, up to the next match
        for (qint64 l = number + 1; l <= number + after && l <= starts.size(); ++l) {
            if (std::any_of(hits.cbegin(), hits.cend(),
                            [&](const auto &h) { return h.second == l; }))
                break;
            file.lines.append({l, lineText(l), false});
            emitted = l;
        }
    }
    return scan;
}

/// Reads and matches one file of the walk (`size` when the walk knows it).
FileScan scanFile(ExecutionBackend &backend, const GrepRequest &request,
                  const QRegularExpression &re, bool lineByLine, const QString &path,
                  std::optional<qint64> size, int budget)
{
    FileScan scan;
    scan.budget = budget;
    if (size && *size > request.maxFileBytes) {
        scan.status = FileScan::Status::Large;
        return scan;
    }
    FileRange range;
    try {
        range = backend.readFileRange(path, 0, request.maxFileBytes + 1);
    } catch (const OSError &) {
        scan.status = FileScan::Status::Unreadable; // gone since listed, a FIFO, no permission
        return scan;
    }
    return scanData(request, re, lineByLine, path, range.data, budget);
}

/// Local files per batch searched in parallel, and per thread's share of one.
constexpr int GrepBatchFiles = 256;
constexpr int GrepUnitFiles = 64; // one compiled copy of the pattern each

} // namespace

GrepResult grepWorkspace(ExecutionBackend &backend, const GrepRequest &request)
{
    if (request.pattern.isEmpty())
        throw ValueError(QStringLiteral("grep: the pattern is empty"));
    if (request.pattern.startsWith(QLatin1String("(*")))
        throw ValueError(QStringLiteral("grep: patterns may not start with a PCRE2 option such "
                                        "as (*LIMIT_MATCH=…) or (*UTF)"));
    QRegularExpression::PatternOptions options =
        QRegularExpression::MultilineOption | QRegularExpression::DontCaptureOption;
    if (request.caseInsensitive)
        options |= QRegularExpression::CaseInsensitiveOption;
    const QRegularExpression re(
        QStringLiteral("(*LIMIT_MATCH=%1)").arg(RegexMatchLimit) + request.pattern, options);
    if (!re.isValid())
        throw ValueError(QStringLiteral("grep: invalid regular expression at offset %1: %2")
                             .arg(re.patternErrorOffset() -
                                  QStringLiteral("(*LIMIT_MATCH=)").size() -
                                  QString::number(RegexMatchLimit).size())
                             .arg(re.errorString()));
    re.optimize();
    const bool lineByLine = needsLineByLine(request.pattern);

    GrepResult result;
    qint64 shown = 0; // lines (Content) or files
    const auto budget = [&] { return int(request.maxResults - shown); };
    // Adds one file's scan to the result, as a sequential search would have; false when the
    // search ends there. A Content scan made with a larger budget than is left by the time it
    // is merged gives nullopt: the file is scanned again with what is left.
    const auto merge = [&](FileScan &&scan) -> std::optional<bool> {
        switch (scan.status) {
        case FileScan::Status::Large:
            ++result.skippedLarge;
            return true;
        case FileScan::Status::Binary:
            ++result.skippedBinary;
            return true;
        case FileScan::Status::Unreadable:
            ++result.skippedUnreadable;
            return true;
        case FileScan::Status::Searched:
            break;
        }
        if (scan.error)
            std::rethrow_exception(scan.error);
        GrepFile &file = scan.file;
        if (request.output == GrepOutput::Content) {
            const bool exact = scan.budget == budget();
            if (!exact && (scan.overBudget || file.count > budget()))
                return std::nullopt;
            ++result.filesSearched;
            shown += file.count;
            result.matchingLines += file.count;
            if (file.count > 0)
                result.files.append(std::move(file));
            if (scan.overBudget)
                result.more = true;
            return !scan.overBudget;
        }
        ++result.filesSearched;
        if (file.count == 0)
            return true;
        if (shown == request.maxResults) {
            result.more = true;
            return false;
        }
        ++shown;
        result.files.append(std::move(file));
        return true;
    };
    const auto searchFile = [&](const QString &path, std::optional<qint64> size) -> bool {
        return *merge(scanFile(backend, request, re, lineByLine, path, size, budget()));
    };

    // One file named as the path: search it alone.
    const FileInfo top = backend.stat(request.scope.path);
    if (top.type != FileInfo::Type::Directory) {
        if (top.type == FileInfo::Type::File)
            searchFile(WorkspaceFs::normalize(request.scope.path), top.size);
        return result;
    }
    ScopedWalk walk(request.scope);
    if (backend.fetchesFiles()) {
        // A remote tree: listed (one round trip), its files fetched in ONE archive, matched
        // here in the walk's order; what an agent put there bounds the fetch.
        FileFetch fetch{walk.root(), {}, {}, request.maxFileBytes};
        QList<WalkEntry> candidates;
        qint64 bytes = 0;
        walk.run(backend, true, [&](const WalkEntry &e, bool excluded) {
            fetch.listed.append(e);
            if (excluded || e.type != FileInfo::Type::File || !walk.included(walk.relative(e.path)))
                return true;
            candidates.append(e);
            const qint64 size = e.size.value_or(request.maxFileBytes + 1);
            if (size <= request.maxFileBytes) { // a larger file is skipped without reading
                bytes += size;
                fetch.paths.append(e.path);
            }
            return true;
        });
        if (bytes > request.maxFetchBytes)
            throw ValueError(fetchTooLarge(request, fetch.paths.size(), bytes));
        const std::optional<QHash<QString, QByteArray>> fetched = backend.fetchFiles(fetch);
        if (!fetched)
            throw OSError(QStringLiteral("grep: the files under '%1' grew past their listed sizes "
                                         "while they were fetched; search again, or narrow "
                                         "the path or include to files that are not being "
                                         "written")
                              .arg(request.scope.path),
                          EAGAIN);
        for (const WalkEntry &e : std::as_const(candidates)) {
            bool more = true;
            if (e.size.value_or(request.maxFileBytes + 1) > request.maxFileBytes)
                ++result.skippedLarge;
            else if (const auto it = fetched->constFind(e.path); it != fetched->cend())
                more = *merge(scanData(request, re, lineByLine, e.path, *it, budget()));
            else
                ++result.skippedUnreadable; // gone since listed, a FIFO, no permission
            if (!more)
                return result; // capped: the walk's bound never came into it
        }
        result.stoppedEarly = walk.stoppedEarly();
        return result;
    }
    // Remote backends read whole files: their sizes come with the walk, so a large file is
    // skipped before it is read; the local ones read only up to the bound anyway.
    // The files are read and matched in batches on several threads (each with its own copy
    // of the pattern), and merged in the walk's order: the result is the sequential one.
    const bool withStat = !backend.hasRangedRead();
    QList<std::pair<QString, std::optional<qint64>>> batch;
    const auto searchBatch = [&]() -> bool {
        std::vector<FileScan> scans(size_t(batch.size()));
        const int batchBudget = budget();
        const int units = int((batch.size() + GrepUnitFiles - 1) / GrepUnitFiles);
        runParallel(units, int(batch.size()), {}, [&](int unit, std::atomic<int> &) {
            const QRegularExpression own(re.pattern(), re.patternOptions());
            const qsizetype end = qMin(batch.size(), qsizetype(unit + 1) * GrepUnitFiles);
            for (qsizetype i = qsizetype(unit) * GrepUnitFiles; i < end; ++i) {
                try {
                    scans[size_t(i)] = scanFile(backend, request, own, lineByLine, batch[i].first,
                                                batch[i].second, batchBudget);
                } catch (...) {
                    scans[size_t(i)].error = std::current_exception();
                }
            }
        });
        for (qsizetype i = 0; i < batch.size(); ++i) {
            std::optional<bool> more = merge(std::move(scans[size_t(i)]));
            if (!more)
                more = searchFile(batch[i].first, batch[i].second);
            if (!*more)
                return false;
        }
        batch.clear();
        return true;
    };
    bool more = true;
    walk.run(backend, withStat, [&](const WalkEntry &e, bool excluded) {
        if (excluded || e.type != FileInfo::Type::File)
            return true;
        if (!walk.included(walk.relative(e.path)))
            return true;
        batch.append({e.path, withStat ? e.size : std::nullopt});
        if (batch.size() < GrepBatchFiles)
            return true;
        more = searchBatch();
        return more;
    });
    if (more && !batch.isEmpty())
        searchBatch();
    result.stoppedEarly = walk.stoppedEarly();
    return result;
}

QString formatGrep(const GrepRequest &request, const GrepResult &result)
{
    QString out;
    for (const GrepFile &f : result.files) {
        switch (request.output) {
        case GrepOutput::FilesWithMatches:
            out += f.path + u'\n';
            break;
        case GrepOutput::Count:
            out += f.path + u':' + QString::number(f.count) + u'\n';
            break;
        case GrepOutput::Content: {
            qint64 previous = -1;
            const bool context = request.contextBefore > 0 || request.contextAfter > 0;
            for (const GrepLine &l : f.lines) {
                if (context && previous >= 0 && l.line > previous + 1)
                    out += QLatin1String("--\n");
                out += f.path + (l.match ? u':' : u'-') + QString::number(l.line) +
                       (l.match ? u':' : u'-') + l.text + u'\n';
                previous = l.line;
            }
            if (context && &f != &result.files.constLast())
                out += QLatin1String("--\n");
            break;
        }
        }
    }
    if (result.files.isEmpty())
        out += QStringLiteral("No matches (%1 files searched).\n").arg(result.filesSearched);
    if (result.more) {
        const char *what = request.output == GrepOutput::Content ? "matching lines" : "files";
        out += QStringLiteral("[more: stopped after %1 %2; narrow the pattern, path or include, "
                              "or raise max_results]\n")
                   .arg(request.maxResults)
                   .arg(QLatin1String(what));
    }
    if (result.stoppedEarly)
        out += QStringLiteral("[more: the search stopped after %1 entries of the tree; give a "
                              "narrower path]\n")
                   .arg(request.scope.maxEntriesVisited);
    // Binary files are skipped silently (as grep -I and ripgrep do; the count is in the
    // structured result); large and unreadable ones may hold matches, so the text says so.
    QStringList skipped;
    if (result.skippedLarge)
        skipped << QStringLiteral("%1 larger than %2 bytes")
                       .arg(result.skippedLarge)
                       .arg(request.maxFileBytes);
    if (result.skippedUnreadable)
        skipped << QStringLiteral("%1 unreadable").arg(result.skippedUnreadable);
    if (!skipped.isEmpty())
        out += QStringLiteral("[files skipped: %1]\n").arg(skipped.join(QStringLiteral(", ")));
    out.chop(out.endsWith(u'\n') ? 1 : 0);
    return out;
}

GlobResult globWorkspace(ExecutionBackend &backend, const GlobRequest &request)
{
    if (request.scope.include.isEmpty())
        throw ValueError(QStringLiteral("glob: the pattern is empty"));
    ScopedWalk walk(request.scope);
    QList<GlobPattern> folderPatterns;
    for (const GlobPattern &p : walk.include().patterns()) {
        if (p.directoryOnly())
            folderPatterns.append(p);
    }
    GlobResult result;
    const bool withStat = request.order == GlobOrder::Newest;
    walk.run(backend, withStat, [&](const WalkEntry &e, bool excluded) {
        if (excluded)
            return true;
        const QStringView rel = walk.relative(e.path);
        const bool matched =
            e.type == FileInfo::Type::Directory
                ? std::any_of(folderPatterns.cbegin(), folderPatterns.cend(),
                              [&](const GlobPattern &p) { return p.matches(rel, true); })
                : walk.include().matches(rel, false);
        if (matched)
            result.files.append(e);
        return true;
    });
    result.stoppedEarly = walk.stoppedEarly();
    result.matched = result.files.size();
    if (request.order == GlobOrder::Newest) {
        std::stable_sort(
            result.files.begin(), result.files.end(), [](const WalkEntry &a, const WalkEntry &b) {
                return a.mtimeMs != b.mtimeMs ? a.mtimeMs > b.mtimeMs : a.path < b.path;
            });
    } else {
        std::sort(result.files.begin(), result.files.end(),
                  [](const WalkEntry &a, const WalkEntry &b) { return a.path < b.path; });
    }
    if (result.files.size() > request.maxResults) {
        result.files.resize(request.maxResults);
        result.more = true;
    }
    return result;
}

void appendEntryKind(QString &out, FileInfo::Type type, const std::optional<qint64> &size)
{
    switch (type) {
    case FileInfo::Type::Directory:
        out += u'/';
        return;
    case FileInfo::Type::Symlink:
        out += QLatin1StringView(" (symlink)");
        return;
    case FileInfo::Type::Other:
        out += QLatin1StringView(" (special file)");
        return;
    case FileInfo::Type::File:
        break;
    }
    if (size) {
        out += QLatin1StringView(" (");
        out += QString::number(*size);
        out += QLatin1StringView(" bytes)");
    }
}

TreeResult treeWorkspace(ExecutionBackend &backend, const TreeRequest &request)
{
    ScopedWalk walk(request.scope);
    TreeResult result;
    const auto line = [&](const WalkEntry &e, const QString &note) {
        const QString name = e.path.mid(e.path.lastIndexOf(u'/') + 1);
        QString l = QString(e.depth * 2, u' ') + name;
        appendEntryKind(l, e.type, e.size);
        result.text += l + note + u'\n';
    };
    walk.run(
        backend, true,
        [&](const WalkEntry &e, bool excluded) {
            if (result.entries.size() == request.maxEntries) {
                result.more = true;
                return false;
            }
            if (excluded && e.type != FileInfo::Type::Directory)
                return true; // an excluded file is left out
            result.entries.append(e);
            if (excluded) {
                ++result.excludedFolders;
                line(e, QStringLiteral(" (excluded: not expanded)"));
            } else {
                line(e, QString());
            }
            return true;
        },
        [&](const WalkEntry &e) { return e.depth + 1 < request.maxDepth; });
    if (result.entries.isEmpty())
        result.text = QStringLiteral("(empty folder)\n");
    if (result.more)
        result.text += QStringLiteral("[more: stopped after %1 entries; ask for a subfolder or a "
                                      "smaller depth, or raise max_entries]\n")
                           .arg(request.maxEntries);
    if (walk.stoppedEarly())
        result.text += QStringLiteral("[more: stopped after visiting %1 entries]\n")
                           .arg(request.scope.maxEntriesVisited);
    result.text.chop(1);
    return result;
}

} // namespace elsai
