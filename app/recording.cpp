// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "recording.h"

#include "errors.h"
#include "sessionoptions.h"

#include <QFileInfo>

namespace elsai {

HeadlessRecording::HeadlessRecording(const SessionOptions &options)
    : m_file(options.recordFile), m_agents(options.recordAgents)
{
}

HeadlessRecording::~HeadlessRecording() = default;

bool HeadlessRecording::begin(const SandboxPtr &sandbox)
{
    if (!wanted() || m_recorder || m_failed)
        return !m_failed;
    try {
        SessionRecorder::Options options;
        options.agents = m_agents;
        options.name = QFileInfo(m_file).completeBaseName();
        m_recorder = std::make_unique<SessionRecorder>(sandbox, options);
        return true;
    } catch (const SandboxError &e) {
        printError(QStringLiteral("--record: ") + e.display());
        m_failed = true;
        return false;
    }
}

int HeadlessRecording::finish(int status)
{
    if (!m_recorder)
        return m_failed && status == 0 ? 1 : status;
    m_recorder->stop();
    try {
        m_recorder->save(m_file);
        if (m_recorder->dropped() > 0)
            printError(QStringLiteral("--record: %1 calls were left out of '%2' (the recording "
                                      "keeps at most %3 steps and 15 MiB)")
                           .arg(m_recorder->dropped())
                           .arg(m_file)
                           .arg(SessionRecorderOptions().maxSteps));
    } catch (const SandboxError &e) {
        printError(QStringLiteral("--record: ") + e.display());
        return status == 0 ? 1 : status;
    }
    return status;
}

} // namespace elsai
