// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "sandboxspec.h"

#include <QStackedWidget>

#include <memory>

namespace elsai {

/// The New Sandbox dialog's per-backend settings: one page per SandboxSpec backend (object
/// names "page_local", "page_bwrap", …), each field named after its spec member
/// ("bwrapNetwork", "sshHost", "daytonaApiKey", "awsSecretAccessKey", …).
///
/// Values the backend reads from the environment (DAYTONA_*, AWS_*) are pre-filled from it
/// when the spec leaves them empty, and a note beside the field names the variable they came
/// from. Secrets (API keys, secret keys, tokens) are only ever shown in password echo mode.
class NewSandboxBackendPages : public QStackedWidget
{
    Q_OBJECT

public:
    explicit NewSandboxBackendPages(QWidget *parent = nullptr);
    ~NewSandboxBackendPages() override;

    /// Shows the page of `backend` (a name of SandboxSpec::availableBackends()).
    void showBackend(const QString &backend);
    QString currentBackend() const;

    /// Fills every page from `spec`; members no page shows are kept and given back by apply().
    void setSpec(const SandboxSpec &spec);
    /// Writes the current backend's fields into `spec` (the other backends' members keep the
    /// values last set); ValueError naming the field when one is invalid.
    void apply(SandboxSpec &spec) const;
    /// What the current page still needs before OK (e.g. "ssh needs a host"), or empty.
    QString missingField() const;

Q_SIGNALS:
    /// A field changed: missingField() may have changed.
    void edited();

private:
    struct Ui;
    std::unique_ptr<Ui> m_ui;
};

} // namespace elsai
