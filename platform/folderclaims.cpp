// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "folderclaims.h"

#include "errors.h"
#include "folderoverlap.h"

#include <QDir>
#include <QFileInfo>
#include <QMutex>

#include <map>
#include <utility>

namespace elsai {

namespace {

struct Claim
{
    FolderClaim::Role role;
    QString path; // canonical
};

QMutex s_mutex;
std::map<quint64, Claim> s_claims; // guarded by s_mutex
quint64 s_nextId = 1;

/// The overlap rule of folderoverlap.h (symlinks resolved, bind mounts seen by inode).
bool isSameOrInside(const QString &inner, const QString &outer)
{
    const FolderRelation r = relateFolders(inner, outer);
    return r == FolderRelation::Same || r == FolderRelation::FirstInsideSecond;
}

} // namespace

QString FolderClaim::canonical(const QString &path)
{
    const QFileInfo fi(path);
    const QString c = fi.canonicalFilePath();
    return c.isEmpty() ? QDir::cleanPath(fi.absoluteFilePath()) : c;
}

FolderClaim::FolderClaim(Role role, const QString &path)
{
    const QString c = canonical(path);
    QMutexLocker lock(&s_mutex);
    for (const auto &[id, other] : s_claims) {
        if (other.role == role)
            continue;
        const QString &offload = role == Role::Offload ? c : other.path;
        const QString &workspace = role == Role::Offload ? other.path : c;
        if (isSameOrInside(offload, workspace)) {
            throw ValueError(QStringLiteral("the offload folder '%1' is inside the workspace "
                                            "'%2': an agent could replace it with a link or "
                                            "read its files; choose an offload folder outside "
                                            "every workspace")
                                 .arg(offload, workspace));
        }
    }
    m_id = s_nextId++;
    s_claims.emplace(m_id, Claim{role, c});
}

FolderClaim::~FolderClaim()
{
    release();
}

FolderClaim::FolderClaim(FolderClaim &&other) noexcept : m_id(std::exchange(other.m_id, 0)) {}

FolderClaim &FolderClaim::operator=(FolderClaim &&other) noexcept
{
    if (this != &other) {
        release();
        m_id = std::exchange(other.m_id, 0);
    }
    return *this;
}

void FolderClaim::release()
{
    if (!m_id)
        return;
    QMutexLocker lock(&s_mutex);
    s_claims.erase(std::exchange(m_id, 0));
}

} // namespace elsai
