#pragma once

#include <QDialog>

namespace elsai {

class SandboxController;

/// Before syncing back: what flush would add / change / keep / report as conflicting on the
/// host under the sync policy (planFlush off the GUI thread), with a per-file text diff of the
/// host and workspace versions; then "Flush" runs it with a progress bar.
class FlushPreviewDialog : public QDialog
{
    Q_OBJECT

public:
    FlushPreviewDialog(SandboxController *controller, const QString &workspaceId,
                       QWidget *parent = nullptr);
};

} // namespace elsai
