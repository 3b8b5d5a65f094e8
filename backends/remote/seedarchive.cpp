// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "seedarchive.h"

#include "errors.h"
#include "glob.h"
#include "localtar.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include <sys/stat.h>

namespace elsai::remote {

namespace {

std::optional<FileStamp> hostStamp(const QString &path)
{
    struct stat st;
    if (::lstat(QFile::encodeName(path).constData(), &st) != 0 || !S_ISREG(st.st_mode))
        return std::nullopt;
    return FileStamp{st.st_size, qint64(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec};
}

} // namespace

SeedArchive::SeedArchive(const QString &source, const QStringList &excludes,
                         const QString &workParent, const QStringList &tarArgs)
    : m_root(QDir(source).absolutePath()), m_plan(planSeed(m_root, GlobSet(excludes)))
{
    QByteArray list;
    for (const SeedPlanEntry &e : m_plan.entries) {
        if (e.action != SeedPlanEntry::Action::Copy)
            continue;
        list += e.path.toUtf8() + '\0';
        if (!e.isDir) {
            ++m_total;
            if (const auto st = hostStamp(m_root + QLatin1Char('/') + e.path))
                m_hostStamps.insert(e.path, *st);
        }
    }
    if (list.isEmpty())
        return;
    m_work = std::make_unique<QTemporaryDir>(workParent + QStringLiteral("/seed-XXXXXX"));
    const QString listFile = m_work->path() + QStringLiteral("/list");
    QFile f(listFile);
    if (!m_work->isValid() || !f.open(QIODevice::WriteOnly) || f.write(list) != list.size())
        throw OSError(QStringLiteral("cannot stage the seed of %1 locally").arg(m_root));
    f.close();
    m_tar = m_work->path() + QStringLiteral("/seed.tar");
    m_errors = runLocalTar(
        QStringList{QStringLiteral("-c"), QStringLiteral("-f"), m_tar,
                    QStringLiteral("--format=posix"), QStringLiteral("--null"),
                    QStringLiteral("--no-recursion"),
                    // like local seeding: no setuid/setgid bits
                    QStringLiteral("--mode=ug-s")} +
        tarArgs + QStringList{QStringLiteral("-C"), m_root, QStringLiteral("-T"), listFile});
}

SeedArchive::~SeedArchive() = default;

QString SeedArchive::scratchFile(const QString &name) const
{
    return m_work ? m_work->path() + u'/' + name : QString();
}

WorkspaceSeedResult SeedArchive::finish(const QHash<QString, FileStamp> &remote,
                                        SeedManifest *manifest, const QString &where) const
{
    WorkspaceSeedResult result;
    result.errors = m_plan.errors + m_errors;
    manifest->hostRoot = m_root;
    for (const SeedPlanEntry &e : m_plan.entries) {
        if (e.action != SeedPlanEntry::Action::Copy) {
            result.skippedPaths << e.path;
            continue;
        }
        if (e.isDir)
            continue;
        const auto ws = remote.constFind(e.path);
        if (ws == remote.constEnd()) {
            result.errors << QStringLiteral("'%1' was not written %2").arg(e.path, where);
            continue;
        }
        ++result.filesSeeded;
        result.bytesSeeded += ws->size;
        manifest->files.insert(e.path, {m_hostStamps.value(e.path, {-1, 0}), *ws});
    }
    return result;
}

} // namespace elsai::remote
