#pragma once

#include "sandboxspec.h"

#include <QDialog>

namespace elsai {

/// Every Sandbox parameter and the local backend's, with the spec's defaults pre-filled, the
/// default excludes and includes visible and editable, and a seed preview (planSeed off the
/// GUI thread): what will be copied, what each exclude skips, symlinks and special files
/// dropped.
class NewSandboxDialog : public QDialog
{
    Q_OBJECT

public:
    explicit NewSandboxDialog(QWidget *parent = nullptr);

    void setSpec(const SandboxSpec &spec);
    /// The spec the fields describe (ValueError when a field is invalid).
    SandboxSpec spec() const;
};

} // namespace elsai
