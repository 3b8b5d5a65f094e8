// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// libFuzzer target: the confined path resolver (platform/workspacefs.h).
// A fixed workspace holds files, folders and symlinks that point inside, outside (absolute and
// `..`), and nowhere; a file beside the workspace holds a secret. Every input is a path tried
// with every read-side operation, through openat2 and through the fallback walk. Any call that
// returns the secret, or lists the folder outside, is an escape and aborts.
#include "confinedopen.h"
#include "errors.h"
#include "workspacefs.h"

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include <cstdint>
#include <cstdlib>
#include <memory>

#include <unistd.h>

namespace {

const QByteArray kSecret = "OUTSIDE-SECRET-7f3a";

struct Fixture
{
    QTemporaryDir base;
    std::unique_ptr<elsai::WorkspaceFs> fs;

    Fixture()
    {
        const QString ws = base.path() + QStringLiteral("/ws");
        QDir().mkpath(ws + QStringLiteral("/a/b"));
        QDir().mkpath(base.path() + QStringLiteral("/ws-evil"));
        put(base.path() + QStringLiteral("/secret"), kSecret);
        put(base.path() + QStringLiteral("/ws-evil/secret"), kSecret);
        put(ws + QStringLiteral("/a/b/file.txt"), "inside\n");
        put(ws + QStringLiteral("/top.txt"), "top\n");
        link("../../secret", ws + QStringLiteral("/a/up"));
        link(QFile::encodeName(base.path() + QStringLiteral("/secret")),
             ws + QStringLiteral("/abs"));
        link("a/b", ws + QStringLiteral("/inner"));
        link("../ws-evil", ws + QStringLiteral("/evil"));
        link("missing/../../..", ws + QStringLiteral("/dangling"));
        link("loop", ws + QStringLiteral("/loop"));
        link("/proc/self/root", ws + QStringLiteral("/magic"));
        fs = std::make_unique<elsai::WorkspaceFs>(ws);
    }
    static void put(const QString &path, const QByteArray &data)
    {
        QFile f(path);
        if (f.open(QIODevice::WriteOnly))
            f.write(data);
    }
    static void link(const QByteArray &target, const QString &at)
    {
        if (::symlink(target.constData(), QFile::encodeName(at).constData()) != 0)
            std::abort();
    }
};

void tryAll(const elsai::WorkspaceFs &fs, const QString &path)
{
    try {
        if (fs.readFile(path, 1 << 16).contains(kSecret))
            std::abort();
    } catch (const elsai::SandboxError &) {
    }
    try {
        for (const elsai::FileInfo &e : fs.listDir(path)) {
            if (e.path.contains(QStringLiteral("secret")))
                std::abort();
        }
    } catch (const elsai::SandboxError &) {
    }
    try {
        (void)fs.stat(path);
        (void)fs.exists(path);
    } catch (const elsai::SandboxError &) {
    }
    try {
        const int fd = fs.openDirectory(path);
        ::close(fd);
    } catch (const elsai::SandboxError &) {
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static Fixture fixture;
    if (size > 8192)
        return 0;
    const QString path = QString::fromUtf8(reinterpret_cast<const char *>(data), qsizetype(size));
    try {
        (void)elsai::WorkspaceFs::normalize(path);
    } catch (const elsai::SandboxError &) {
    }
    elsai::setConfinedOpenForceFallback(false);
    tryAll(*fixture.fs, path);
    elsai::setConfinedOpenForceFallback(true);
    tryAll(*fixture.fs, path);
    return 0;
}
