// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "textedit.h"

#include "errors.h"

#include <QList>
#include <QStringList>

#include <algorithm>

namespace elsai {

namespace {

/// A run of whole lines of the original, [begin, end) in bytes, and what replaces it.
struct Block
{
    qsizetype begin = 0;
    qsizetype end = 0;
    qint64 firstLine = 0; ///< 0-based line of `begin`
    QByteArray replacement;
};

QList<QByteArrayView> splitLines(QByteArrayView text)
{
    QList<QByteArrayView> lines;
    qsizetype pos = 0;
    while (pos < text.size()) {
        const qsizetype nl = text.indexOf('\n', pos);
        const qsizetype end = nl < 0 ? text.size() : nl + 1;
        lines.append(text.sliced(pos, end - pos));
        pos = end;
    }
    return lines;
}

/// One diff line: the marker, the line without its end, and git's note for a missing one.
void appendLine(QByteArray &out, char marker, QByteArrayView line)
{
    out += marker;
    if (line.endsWith('\n')) {
        out += line;
    } else {
        out += line;
        out += "\n\\ No newline at end of file\n";
    }
}

QString diffOf(const QString &path, QByteArrayView before, const QList<Block> &blocks, int context)
{
    const QList<QByteArrayView> lines = splitLines(before);
    QByteArray out = "--- a/" + path.toUtf8() + "\n+++ b/" + path.toUtf8() + '\n';
    qint64 delta = 0; // new line numbers run this far from the old ones before a hunk
    for (qsizetype i = 0; i < blocks.size();) {
        // blocks closer than twice the context share a hunk
        qsizetype j = i;
        const auto oldLines = [&](const Block &b) {
            return qint64(splitLines(before.sliced(b.begin, b.end - b.begin)).size());
        };
        while (j + 1 < blocks.size() &&
               blocks[j + 1].firstLine - (blocks[j].firstLine + oldLines(blocks[j])) <= 2 * context)
            ++j;
        const qint64 from = qMax<qint64>(0, blocks[i].firstLine - context);
        const qint64 to =
            qMin<qint64>(lines.size(), blocks[j].firstLine + oldLines(blocks[j]) + context);
        QByteArray body;
        qint64 newCount = 0;
        qint64 line = from;
        qint64 hunkDelta = 0;
        for (qsizetype k = i; k <= j; ++k) {
            for (; line < blocks[k].firstLine; ++line, ++newCount)
                appendLine(body, ' ', lines[line]);
            const qint64 removed = oldLines(blocks[k]);
            for (qint64 r = 0; r < removed; ++r)
                appendLine(body, '-', lines[line + r]);
            line += removed;
            const QList<QByteArrayView> added = splitLines(blocks[k].replacement);
            for (QByteArrayView a : added)
                appendLine(body, '+', a);
            newCount += added.size();
            hunkDelta += added.size() - removed;
        }
        for (; line < to; ++line, ++newCount)
            appendLine(body, ' ', lines[line]);
        const qint64 oldCount = to - from;
        const qint64 oldStart = oldCount ? from + 1 : from;
        const qint64 newStart = newCount ? from + delta + 1 : from + delta;
        out += QStringLiteral("@@ -%1,%2 +%3,%4 @@\n")
                   .arg(oldStart)
                   .arg(oldCount)
                   .arg(newStart)
                   .arg(newCount)
                   .toUtf8();
        out += body;
        delta += hunkDelta;
        i = j + 1;
    }
    QString diff = QString::fromUtf8(out);
    if (diff.size() > MaxDiffChars) {
        const qsizetype cut = diff.lastIndexOf(u'\n', MaxDiffChars) + 1;
        diff = diff.left(cut > 0 ? cut : MaxDiffChars) +
               QStringLiteral("[diff cut at %1 characters; the edit was applied whole]\n")
                   .arg(MaxDiffChars);
    }
    return diff;
}

} // namespace

TextEdit applyExactEdit(const QString &path, const QByteArray &original, const QByteArray &oldText,
                        const QByteArray &newText, bool replaceAll)
{
    if (oldText.isEmpty())
        throw ValueError(QStringLiteral("edit_file: old_string is empty; give the exact text to "
                                        "replace (use write_file to create a file)"));
    if (oldText == newText)
        throw ValueError(QStringLiteral("edit_file: old_string and new_string are the same; "
                                        "there is nothing to change"));
    QList<qsizetype> at;
    for (qsizetype p = original.indexOf(oldText); p >= 0;
         p = original.indexOf(oldText, p + oldText.size())) {
        at.append(p);
        if (!replaceAll && at.size() > 1 && at.size() >= 5)
            break;
    }
    const auto lineOf = [&](qsizetype pos) {
        return qint64(std::count(original.cbegin(), original.cbegin() + pos, '\n')) + 1;
    };
    if (at.isEmpty())
        throw ValueError(QStringLiteral("edit_file: old_string was not found in '%1'; read the "
                                        "file again and copy the text exactly, with its "
                                        "whitespace and line ends")
                             .arg(path));
    if (at.size() > 1 && !replaceAll) {
        QStringList lines;
        for (qsizetype i = 0; i < qMin<qsizetype>(at.size(), 4); ++i)
            lines << QString::number(lineOf(at[i]));
        throw ValueError(
            QStringLiteral("edit_file: old_string occurs %1 times in '%2' (lines "
                           "%3); include more surrounding lines to make it unique, "
                           "or pass replace_all: true")
                .arg(at.size() > 4 ? QStringLiteral("5 or more") : QString::number(at.size()), path,
                     lines.join(QStringLiteral(", "))));
    }

    // The changed blocks: whole lines around each occurrence, merged where they touch.
    const qsizetype n = original.size();
    const auto lineStart = [&](qsizetype pos) {
        return pos == 0 ? 0 : original.lastIndexOf('\n', pos - 1) + 1;
    };
    const auto lineEnd = [&](qsizetype pos) { // past the '\n' of the line holding pos
        const qsizetype nl = original.indexOf('\n', pos);
        return nl < 0 ? n : nl + 1;
    };
    QList<Block> blocks;
    QByteArray content;
    content.reserve(n + at.size() * (newText.size() - oldText.size()));
    qsizetype copied = 0;
    qint64 line = 0;
    qsizetype counted = 0;
    for (qsizetype i = 0; i < at.size();) {
        Block b;
        b.begin = lineStart(at[i]);
        qsizetype j = i;
        b.end = lineEnd(at[j] + oldText.size() - 1);
        for (;;) {
            while (j + 1 < at.size() && at[j + 1] < b.end)
                b.end = qMax(b.end, lineEnd(at[++j] + oldText.size() - 1));
            b.replacement.clear();
            qsizetype pos = b.begin;
            for (qsizetype k = i; k <= j; ++k) {
                b.replacement += QByteArrayView(original).sliced(pos, at[k] - pos);
                b.replacement += newText;
                pos = at[k] + oldText.size();
            }
            b.replacement += QByteArrayView(original).sliced(pos, b.end - pos);
            // A replacement that ate the block's last line end joins the next line to it.
            if (!b.replacement.isEmpty() && !b.replacement.endsWith('\n') && b.end < n) {
                b.end = lineEnd(b.end);
                continue;
            }
            break;
        }
        line += std::count(original.cbegin() + counted, original.cbegin() + b.begin, '\n');
        counted = b.begin;
        b.firstLine = line;
        content += QByteArrayView(original).sliced(copied, b.begin - copied);
        content += b.replacement;
        copied = b.end;
        blocks.append(std::move(b));
        i = j + 1;
    }
    content += QByteArrayView(original).sliced(copied);
    // The diff shows only lines that changed: whole lines a block keeps at its start or end
    // are context, not a removal and an addition.
    for (Block &b : blocks) {
        const auto lineAt = [](QByteArrayView text, bool last) {
            if (text.isEmpty())
                return QByteArrayView();
            if (!last) {
                const qsizetype nl = text.indexOf('\n');
                return nl < 0 ? QByteArrayView() : text.first(nl + 1);
            }
            const qsizetype nl = text.lastIndexOf('\n', text.size() - 2);
            return text.sliced(nl + 1);
        };
        for (;;) {
            const QByteArrayView oldBlock =
                QByteArrayView(original).sliced(b.begin, b.end - b.begin);
            const QByteArrayView head = lineAt(oldBlock, false);
            if (head.isEmpty() || !b.replacement.startsWith(head) ||
                (head.size() == oldBlock.size() && head.size() == b.replacement.size()))
                break;
            b.begin += head.size();
            b.replacement.remove(0, head.size());
            ++b.firstLine;
        }
        for (;;) {
            const QByteArrayView oldBlock =
                QByteArrayView(original).sliced(b.begin, b.end - b.begin);
            const QByteArrayView tail = lineAt(oldBlock, true);
            if (tail.isEmpty() || !b.replacement.endsWith(tail) ||
                (tail.size() == oldBlock.size() && tail.size() == b.replacement.size()) ||
                (b.replacement.size() > tail.size() &&
                 b.replacement.at(b.replacement.size() - tail.size() - 1) != '\n'))
                break;
            b.end -= tail.size();
            b.replacement.chop(tail.size());
        }
    }
    return {content, int(at.size()), diffOf(path, original, blocks, 3)};
}

} // namespace elsai
