// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "sandbox.h"
#include "sessionrecorder.h"

#include <QString>
#include <QStringList>

#include <memory>

namespace elsai {

struct SessionOptions;

/// `--record FILE` of a headless session: recording starts once the sandbox has started
/// (begin()) and the plan is saved when the session ends (finish()). Does nothing without
/// --record.
class HeadlessRecording
{
public:
    explicit HeadlessRecording(const SessionOptions &options);
    ~HeadlessRecording();
    HeadlessRecording(const HeadlessRecording &) = delete;
    HeadlessRecording &operator=(const HeadlessRecording &) = delete;

    bool wanted() const { return !m_file.isEmpty(); }
    /// Takes the starting checkpoint of the started `sandbox` and records from now on (once:
    /// a second start is not recorded again). False, with the error on stderr, when it cannot.
    bool begin(const SandboxPtr &sandbox);
    /// Stops recording and writes the plan. Returns `status`, or 1 when it was 0 and the plan
    /// could not be written (nothing recorded, an I/O error: said on stderr).
    int finish(int status);

private:
    QString m_file;
    QStringList m_agents;
    std::unique_ptr<SessionRecorder> m_recorder;
    bool m_failed = false;
};

} // namespace elsai
