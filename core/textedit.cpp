// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "textedit.h"

#include "errors.h"
#include "unifieddiff.h"

#include <QList>
#include <QStringList>

#include <algorithm>

namespace elsai {

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
        if (!replaceAll && at.size() >= 5)
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

    // Byte-exact: only the occurrences change, whatever the encoding or line ends.
    QByteArray content;
    content.reserve(original.size() + at.size() * (newText.size() - oldText.size()));
    qsizetype copied = 0;
    for (const qsizetype p : std::as_const(at)) {
        content += QByteArrayView(original).sliced(copied, p - copied);
        content += newText;
        copied = p + oldText.size();
    }
    content += QByteArrayView(original).sliced(copied);

    // The one unified diff of the code base (platform/unifieddiff.*); it shows text, so bytes
    // that are not UTF-8 appear as replacement characters there, never in the file.
    QString diff = unifiedDiff(QString::fromUtf8(original), QString::fromUtf8(content),
                               QStringLiteral("a/") + path, QStringLiteral("b/") + path);
    if (diff.size() > MaxDiffChars) {
        const qsizetype cut = diff.lastIndexOf(u'\n', MaxDiffChars) + 1;
        diff = diff.left(cut > 0 ? cut : MaxDiffChars) +
               QStringLiteral("[diff cut at %1 characters; the edit was applied whole]\n")
                   .arg(MaxDiffChars);
    }
    return {content, int(at.size()), diff};
}

} // namespace elsai
