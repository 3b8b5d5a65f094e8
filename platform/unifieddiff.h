// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QString>
#include <QStringView>

namespace elsai {

struct UnifiedDiffOptions
{
    /// Unchanged lines shown around each change; hunks closer than twice this merge.
    int context = 3;
    /// Bound on the comparison's work (diagonals searched plus lines followed, summed over
    /// the whole diff). Past it, each region still to compare is shown as removed + added:
    /// still a correct diff that applies, no longer a minimal one. The default keeps the
    /// worst case near a second; the work grows with the lines times the differences.
    qint64 maxCost = 50'000'000;
};

/// The one unified diff of the code base (the Changes panel, the flush preview, the agents'
/// edit tools): `oldText` and `newText` compared line by line with Myers' O((N+M)·D)
/// algorithm in linear space (the "middle snake" divide and conquer, as GNU diff), after
/// stripping the common head and tail. Empty when the texts are equal.
///
/// The output is what `diff -u` prints and `patch` / `git apply` take: `--- oldName`,
/// `+++ newName`, then hunks `@@ -l,s +l,s @@` (a count of 1 is left out, an empty side starts
/// at line 0) of ' ', '-' and '+' lines, deletions before insertions within a change. A last
/// line without a newline is followed by `\ No newline at end of file`, and differs from the
/// same line with one. Lines end at '\n' only ('\r' stays part of the line).
///
/// Memory: O(N+M) for lines, indices and the two diagonal vectors; the output is at most the
/// size of both inputs plus the hunk headers. Thread-safe (no shared state).
QString unifiedDiff(QStringView oldText, QStringView newText, const QString &oldName,
                    const QString &newName, const UnifiedDiffOptions &options = {});

} // namespace elsai
