// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

// The tree the checkpoint benchmarks (checkpoint_bench, remote_checkpoint_bench) and search_bench
// work on, the change they time, and their ratio line: one generator, so the local and remote
// figures describe the same files.

#include "pairbench.h"

#include <QByteArray>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QString>
#include <QStringList>

#include <cstdio>
#include <functional>
#include <vector>

namespace elsai::bench {

constexpr int FilesPerFolder = 10;

inline void writeFile(const QString &path, const QByteArray &data)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(data) != data.size())
        qFatal("cannot write %s", qPrintable(path));
}

/// 4 KiB of text lines.
inline const QByteArray &textBlob()
{
    static const QByteArray blob = [] {
        QByteArray b;
        while (b.size() < 4096)
            b += "The quick brown fox jumps over the lazy dog 0123456789.\n";
        return b;
    }();
    return blob;
}

/// 200 to 4,000 bytes of text, a different size for each `seed` and `k`.
inline QByteArray fileText(int seed, int k)
{
    return textBlob().left(200 + (seed * 7919 + k * 104729) % 3800);
}

/// `folders` folders of FilesPerFolder files under root/src, 20 folders a level.
inline void generateTree(const QString &root, int folders)
{
    for (int i = 0; i < folders; ++i) {
        const QString dir = root + QStringLiteral("/src/d%1/s%2").arg(i / 20).arg(i % 20);
        QDir().mkpath(dir);
        for (int k = 0; k < FilesPerFolder; ++k)
            writeFile(dir + QStringLiteral("/f%1.txt").arg(k), fileText(i, k));
    }
}

/// Changes 10 files of a generateTree() of `folders` folders (8 edits spread over it, 1 removal,
/// 1 new file), differently each `round`.
inline void change10(const QString &root, int folders, int round)
{
    const int top = std::max(1, folders / 20); // the d<N> folders
    const int step = std::max(1, top / 9);
    for (int i = 0; i < 8; ++i)
        writeFile(root + QStringLiteral("/src/d%1/s0/f%2.txt").arg(i * step).arg(i),
                  QByteArray("edited in round ") + QByteArray::number(round) + '\n');
    QFile::remove(root + QStringLiteral("/src/d%1/s1/f3.txt").arg(std::min(top - 1, top / 2)));
    writeFile(root + QStringLiteral("/src/new-%1.txt").arg(round), "new\n");
}

inline double timedMs(const std::function<void()> &f)
{
    QElapsedTimer t;
    t.start();
    f();
    return double(t.nsecsElapsed()) / 1e6;
}

/// Runs a baseline command (cp, rsync, diff) to its end; false when it failed.
inline bool runCommand(const QStringList &args)
{
    std::vector<QByteArray> a;
    for (const QString &s : args)
        a.push_back(s.toLocal8Bit());
    return spawnAndWait(a, environ, true);
}

/// One line: the medians of both sides and the median of the per-round ratios, against
/// `target` (0: informational).
inline void reportRatio(const char *what, const std::vector<double> &elsai,
                        const std::vector<double> &base, const char *baseline, double target)
{
    std::vector<double> ratios;
    for (size_t i = 0; i < elsai.size() && i < base.size(); ++i)
        ratios.push_back(elsai[i] / base[i]);
    const double r = median(ratios);
    std::printf("%-44s elsai %8.1f ms   %-26s %8.1f ms   ratio %.3f", what, median(elsai), baseline,
                median(base), r);
    if (target > 0)
        std::printf(" (target <= %.1f) %s\n", target, r <= target ? "ok" : "OVER");
    else
        std::printf(" (informational)\n");
}

} // namespace elsai::bench
