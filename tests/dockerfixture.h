// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

// The container engine the docker tests use: never the user's own by accident. They run when
// ELSAI_TEST_DOCKER_HOST names an engine (unix:// or tcp://) and ELSAI_TEST_DOCKER_IMAGE an
// image on it with /bin/sh, coreutils, findutils, tar and setsid — `bash .ci/docker` starts a
// private dockerd and imports a Debian 12 minbase image built without any registry, and
// prints both. Otherwise they skip and say why.
//
//   if (const QString why = test::DockerEngine::unavailable(); !why.isEmpty()) QSKIP(why);
//   auto b = test::DockerEngine::makeBackend("ws");

#include "dockersandboxbackend.h"
#include "enginehttp.h"
#include "errors.h"

#include <QCoreApplication>
#include <QString>
#include <QUrl>

#include <memory>

namespace elsai::test {

struct DockerEngine
{
    static QString host() { return qEnvironmentVariable("ELSAI_TEST_DOCKER_HOST"); }
    static QString image() { return qEnvironmentVariable("ELSAI_TEST_DOCKER_IMAGE"); }

    /// Why the docker tests cannot run here, or empty when they can.
    static QString unavailable()
    {
        if (host().isEmpty() || image().isEmpty())
            return QStringLiteral("no container engine for tests: set ELSAI_TEST_DOCKER_HOST and "
                                  "ELSAI_TEST_DOCKER_IMAGE (bash .ci/docker starts one)");
        try {
            const docker::EngineClient engine(docker::EngineEndpoint::parse(host()));
            docker::EngineRequest ping;
            ping.path = "/_ping";
            ping.timeoutMs = 10000;
            const docker::EngineResponse r = engine.send(ping);
            if (!r.ok())
                return QStringLiteral("the container engine at %1 does not answer: %2")
                    .arg(host(), r.message());
            docker::EngineRequest image;
            image.path = "/images/" + QUrl::toPercentEncoding(DockerEngine::image()) + "/json";
            if (!engine.send(image).ok())
                return QStringLiteral("the image %1 is not on %2")
                    .arg(DockerEngine::image(), host());
        } catch (const SandboxError &e) {
            return e.display();
        }
        return {};
    }

    /// The label of every container this test process makes (teardown removes them).
    static QString testLabel()
    {
        return QStringLiteral("dev.elsai.workbench.test=%1")
            .arg(QCoreApplication::applicationPid());
    }

    static DockerSandboxBackend::Options options()
    {
        DockerSandboxBackend::Options o;
        o.host = host();
        o.image = image();
        o.labels.insert(testLabel().section(u'=', 0, 0), testLabel().section(u'=', 1));
        o.memoryBytes = qint64(512) << 20;
        o.pidsLimit = 256;
        return o;
    }

    /// A backend on a workspace of its own (create() not called yet).
    static std::shared_ptr<DockerSandboxBackend>
    makeBackend(const QString &workspaceId, DockerSandboxBackend::Options o = options())
    {
        return std::make_shared<DockerSandboxBackend>(
            QStringLiteral("%1-%2").arg(workspaceId).arg(QCoreApplication::applicationPid()), o);
    }

    /// Where the engine keeps a volume on this machine (a local engine, as root), or empty.
    static QString volumeOnHost(const QString &volume)
    {
        const docker::EngineClient engine(docker::EngineEndpoint::parse(host()));
        docker::EngineRequest r;
        r.path = "/volumes/" + QUrl::toPercentEncoding(volume);
        return engine.send(r).json().value(QStringLiteral("Mountpoint")).toString();
    }

    /// Removes what this test process left (containers and volumes with its label).
    static void cleanUp()
    {
        if (!unavailable().isEmpty())
            return;
        try {
            DockerSandboxBackend::removeLabelled(options(), {testLabel()});
        } catch (const SandboxError &e) {
            qWarning("docker test cleanup: %s", qPrintable(e.display()));
        }
    }
};

} // namespace elsai::test
