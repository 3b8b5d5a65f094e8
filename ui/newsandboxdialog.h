// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "sandboxspec.h"

#include <QDialog>

#include <memory>

class QTreeWidget;

namespace elsai {

/// Every Sandbox parameter and the chosen backend's (NewSandboxBackendPages: a page per
/// backend, shown when the combo changes), with the spec's defaults pre-filled, the
/// default excludes and includes visible and editable, and a seed preview (planSeed off the
/// GUI thread): what will be copied, what each exclude skips, symlinks and special files
/// dropped.
///
/// Seed excludes: the sandbox always applies DEFAULT_SANDBOX_SEED_EXCLUDES and merges
/// SandboxSpec::seedExclude into them, so the defaults are listed but locked (they cannot be
/// removed — the dialog never pretends to drop one); spec().seedExclude holds only the
/// extras. Sync includes replace the default list: spec().syncInclude is none while the list
/// equals DEFAULT_SANDBOX_SYNC_INCLUDE, else exactly the listed globs.
/// Fields carry object names (workspaceId, backend, seedFrom, seedExcludes, …) for tests.
class NewSandboxDialog : public QDialog
{
    Q_OBJECT

public:
    explicit NewSandboxDialog(QWidget *parent = nullptr);
    ~NewSandboxDialog() override;

    /// Fills every field from `spec`: the backend's page is chosen and filled too.
    void setSpec(const SandboxSpec &spec);
    /// `spec` under its own workspace id when no id of `taken` is it, else under the first of
    /// "<id>-2", "<id>-3", … that is free (a sandbox "like" an existing one).
    static SandboxSpec withFreeWorkspaceId(SandboxSpec spec, const QStringList &taken);
    /// The spec the fields describe (ValueError when a field is invalid).
    SandboxSpec spec() const;

    /// Every exclude listed (defaults first), and the sync includes listed.
    QStringList seedExcludes() const;
    QStringList syncIncludes() const;
    /// Appends an extra exclude / include (as the Add buttons do).
    void addSeedExclude(const QString &pattern);
    void addSyncInclude(const QString &pattern);

    /// Plans the seed of the "seed from" folder with the listed excludes, off the GUI
    /// thread; seedPreviewReady() once the preview list is filled.
    void runSeedPreview();
    QTreeWidget *seedPreview() const;

    /// Why OK is disabled or was refused (a missing ssh host, an invalid field), or empty.
    QString validationMessage() const;

    void accept() override;

Q_SIGNALS:
    void seedPreviewReady();

private:
    struct Ui;
    std::unique_ptr<Ui> m_ui;
    /// Not shown in the dialog; kept from setSpec() (the command line's --read-file-max-bytes).
    qint64 m_readFileMaxBytes = DefaultReadFileMaxBytes;
    /// Not shown either; kept from setSpec() (--execute-soft-return).
    std::optional<double> m_executeSoftReturnSeconds;
    /// The spec's store folder, size limit and the rest: the dialog sets the two switches.
    TimeTravelOptions m_timeTravel;
    /// The backend chosen keeps its history by listing the remote workspace (off by default).
    bool m_historyByListing = false;
    void updateOk();
    void backendChanged(const QString &backend);
    /// Checks the history switches as the spec asked, else as last chosen (local backends) or
    /// off (those that list a remote workspace).
    void setHistoryDefaults();
};

} // namespace elsai
