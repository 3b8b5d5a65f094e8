// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "newsandboxdialog.h"

#include "appsettings.h"
#include "backendregistry.h"

#include "displaytext.h"
#include "errors.h"
#include "glob.h"
#include "inputchecks.h"
#include "newsandboxbackendpages.h"
#include "treecopy.h"
#include "types.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QFutureWatcher>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QLocale>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QTabWidget>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <limits>

namespace elsai {

namespace {

/// Items of a list editor that cannot be edited or removed carry this role.
constexpr int kLockedRole = Qt::UserRole + 1;
/// Rows shown per preview group; the rest is summarised in one line.
constexpr int kPreviewRowCap = 5000;

/// A QListWidget with Add / Remove buttons (and optionally "Reset to defaults").
struct ListEditor
{
    QWidget *widget = nullptr;
    QListWidget *list = nullptr;
    QPushButton *reset = nullptr;

    void add(const QString &text, bool locked = false)
    {
        auto *item = new QListWidgetItem(text, list);
        if (locked) {
            item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
            item->setData(kLockedRole, true);
            item->setForeground(list->palette().color(QPalette::Disabled, QPalette::Text));
            item->setToolTip(NewSandboxDialog::tr("Built-in exclude: always applied"));
        } else {
            item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled | Qt::ItemIsEditable);
        }
    }
    QStringList items() const
    {
        QStringList out;
        for (int i = 0; i < list->count(); ++i) {
            const QString text = list->item(i)->text().trimmed();
            if (!text.isEmpty())
                out.append(text);
        }
        return out;
    }
    void set(const QStringList &locked, const QStringList &editable)
    {
        list->clear();
        for (const QString &s : locked)
            add(s, true);
        for (const QString &s : editable) {
            if (!locked.contains(s))
                add(s);
        }
    }
};

ListEditor makeListEditor(QWidget *parent, const QString &objectName, const QString &newText,
                          bool withReset)
{
    ListEditor e;
    e.widget = new QWidget(parent);
    auto *layout = new QHBoxLayout(e.widget);
    layout->setContentsMargins(0, 0, 0, 0);
    e.list = new QListWidget(e.widget);
    e.list->setObjectName(objectName);
    e.list->setSelectionMode(QAbstractItemView::ExtendedSelection);
    e.list->setMaximumHeight(130);
    auto *buttons = new QVBoxLayout;
    auto *add = new QPushButton(NewSandboxDialog::tr("Add"), e.widget);
    auto *remove = new QPushButton(NewSandboxDialog::tr("Remove"), e.widget);
    buttons->addWidget(add);
    buttons->addWidget(remove);
    if (withReset) {
        e.reset = new QPushButton(NewSandboxDialog::tr("Defaults"), e.widget);
        buttons->addWidget(e.reset);
    }
    buttons->addStretch();
    layout->addWidget(e.list, 1);
    layout->addLayout(buttons);
    QListWidget *list = e.list;
    QObject::connect(add, &QPushButton::clicked, list, [list, newText] {
        auto *item = new QListWidgetItem(newText, list);
        item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled | Qt::ItemIsEditable);
        list->setCurrentItem(item);
        list->editItem(item);
    });
    QObject::connect(remove, &QPushButton::clicked, list, [list] {
        const QList<QListWidgetItem *> selected = list->selectedItems();
        for (QListWidgetItem *item : selected) {
            if (!item->data(kLockedRole).toBool())
                delete item;
        }
    });
    auto updateRemove = [list, remove] {
        const QList<QListWidgetItem *> selected = list->selectedItems();
        remove->setEnabled(std::any_of(selected.begin(), selected.end(), [](auto *item) {
            return !item->data(kLockedRole).toBool();
        }));
    };
    QObject::connect(list, &QListWidget::itemSelectionChanged, remove, updateRemove);
    updateRemove();
    return e;
}

QWidget *withBrowse(QLineEdit *edit, QWidget *parent, const QString &title)
{
    auto *box = new QWidget(parent);
    auto *layout = new QHBoxLayout(box);
    layout->setContentsMargins(0, 0, 0, 0);
    auto *browse = new QPushButton(NewSandboxDialog::tr("Browse…"), box);
    layout->addWidget(edit, 1);
    layout->addWidget(browse);
    QObject::connect(browse, &QPushButton::clicked, edit, [edit, title] {
        const QString dir = QFileDialog::getExistingDirectory(edit, title, edit->text());
        if (!dir.isEmpty())
            edit->setText(dir);
    });
    return box;
}

} // namespace

struct NewSandboxDialog::Ui
{
    QLineEdit *workspaceId;
    QComboBox *backend;
    QGroupBox *backendBox;
    NewSandboxBackendPages *backendPages;
    QLineEdit *workspaceRoot;
    QLineEdit *seedFrom;
    ListEditor excludes;
    ListEditor includes;
    QLineEdit *syncDest;
    QComboBox *noBaseConflict;
    QDoubleSpinBox *ttl;
    QCheckBox *noTtl;
    QDoubleSpinBox *timeout;
    QSpinBox *maxOutput;
    QCheckBox *inheritEnv;
    QCheckBox *checkpoints;
    QCheckBox *trackChanges;
    ListEditor env;
    QSpinBox *killGrace;
    QDialogButtonBox *buttons;
    QLabel *validation;
    QTreeWidget *preview;
    QLabel *previewSummary;
    QPushButton *previewButton;
    QFutureWatcher<SeedPlan> *previewWatcher;
};

NewSandboxDialog::NewSandboxDialog(QWidget *parent) : QDialog(parent), m_ui(std::make_unique<Ui>())
{
    setWindowTitle(tr("New Sandbox"));
    Ui &ui = *m_ui;
    auto *tabs = new QTabWidget(this);

    auto *scroll = new QScrollArea(tabs);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto *settings = new QWidget(scroll);
    scroll->setWidget(settings);
    auto *form = new QFormLayout(settings);
    ui.workspaceId = new QLineEdit(settings);
    ui.workspaceId->setObjectName(QStringLiteral("workspaceId"));
    form->addRow(tr("&Workspace id:"), ui.workspaceId);
    ui.backend = new QComboBox(settings);
    ui.backend->setObjectName(QStringLiteral("backend"));
    ui.backend->addItems(SandboxSpec::availableBackends());
    form->addRow(tr("&Backend:"), ui.backend);
    ui.backendBox = new QGroupBox(settings);
    auto *backendLayout = new QVBoxLayout(ui.backendBox);
    ui.backendPages = new NewSandboxBackendPages(ui.backendBox);
    backendLayout->addWidget(ui.backendPages);
    form->addRow(ui.backendBox);
    ui.workspaceRoot = new QLineEdit(settings);
    ui.workspaceRoot->setObjectName(QStringLiteral("workspaceRoot"));
    ui.workspaceRoot->setPlaceholderText(tr("a new folder under the temp folder (kept)"));
    form->addRow(tr("Workspace &root:"),
                 withBrowse(ui.workspaceRoot, settings, tr("Workspace folder")));
    ui.seedFrom = new QLineEdit(settings);
    ui.seedFrom->setObjectName(QStringLiteral("seedFrom"));
    ui.seedFrom->setPlaceholderText(tr("none: start empty"));
    form->addRow(tr("&Seed from:"), withBrowse(ui.seedFrom, settings, tr("Project to copy in")));
    ui.excludes =
        makeListEditor(settings, QStringLiteral("seedExcludes"), QStringLiteral("*.log"), false);
    form->addRow(tr("Seed e&xcludes:"), ui.excludes.widget);
    ui.includes =
        makeListEditor(settings, QStringLiteral("syncIncludes"), QStringLiteral("docs/**"), true);
    connect(ui.includes.reset, &QPushButton::clicked, this,
            [this] { m_ui->includes.set({}, DEFAULT_SANDBOX_SYNC_INCLUDE); });
    form->addRow(tr("Sync &includes:"), ui.includes.widget);
    ui.syncDest = new QLineEdit(settings);
    ui.syncDest->setObjectName(QStringLiteral("syncDest"));
    ui.syncDest->setPlaceholderText(tr("the seed folder"));
    form->addRow(tr("Sync &destination:"), withBrowse(ui.syncDest, settings, tr("Flush into")));
    ui.noBaseConflict = new QComboBox(settings);
    ui.noBaseConflict->setObjectName(QStringLiteral("noBaseConflict"));
    ui.noBaseConflict->addItem(tr("keep the host file, write the sandbox version beside it"),
                               int(NoBaseConflict::KeepBoth));
    ui.noBaseConflict->addItem(tr("overwrite the host file"), int(NoBaseConflict::Overwrite));
    ui.noBaseConflict->setToolTip(tr("For a flush into a folder this workspace was never seeded "
                                     "from nor flushed to, where a host file differs"));
    form->addRow(tr("Flush without a &base:"), ui.noBaseConflict);

    auto *ttlBox = new QWidget(settings);
    auto *ttlLayout = new QHBoxLayout(ttlBox);
    ttlLayout->setContentsMargins(0, 0, 0, 0);
    ui.ttl = new QDoubleSpinBox(ttlBox);
    ui.ttl->setObjectName(QStringLiteral("ttl"));
    ui.ttl->setRange(1, 1e9);
    ui.ttl->setDecimals(0);
    ui.ttl->setSuffix(tr(" s"));
    ui.noTtl = new QCheckBox(tr("No TTL"), ttlBox);
    ui.noTtl->setObjectName(QStringLiteral("noTtl"));
    connect(ui.noTtl, &QCheckBox::toggled, ui.ttl, &QWidget::setDisabled);
    ttlLayout->addWidget(ui.ttl, 1);
    ttlLayout->addWidget(ui.noTtl);
    form->addRow(tr("Idle &TTL:"), ttlBox);

    ui.timeout = new QDoubleSpinBox(settings);
    ui.timeout->setObjectName(QStringLiteral("timeout"));
    ui.timeout->setRange(0.1, 1e6);
    ui.timeout->setDecimals(1);
    ui.timeout->setSuffix(tr(" s"));
    form->addRow(tr("Command time&out:"), ui.timeout);
    ui.maxOutput = new QSpinBox(settings);
    ui.maxOutput->setObjectName(QStringLiteral("maxOutputBytes"));
    ui.maxOutput->setRange(1, std::numeric_limits<int>::max());
    ui.maxOutput->setSuffix(tr(" bytes"));
    form->addRow(tr("&Max output:"), ui.maxOutput);
    ui.killGrace = new QSpinBox(settings);
    ui.killGrace->setObjectName(QStringLiteral("killGraceMs"));
    ui.killGrace->setRange(0, 600000);
    ui.killGrace->setSuffix(tr(" ms"));
    form->addRow(tr("TERM → KILL &grace:"), ui.killGrace);
    ui.inheritEnv = new QCheckBox(tr("Inherit the workbench's environment"), settings);
    ui.inheritEnv->setObjectName(QStringLiteral("inheritEnv"));
    form->addRow(QString(), ui.inheritEnv);
    ui.env = makeListEditor(settings, QStringLiteral("env"), QStringLiteral("NAME=value"), false);
    form->addRow(tr("&Environment:"), ui.env.widget);
    // History for the Timeline (docs/window.md): on by default where the backend reads the
    // workspace directly, off where it lists a remote one (backendChanged() says the cost).
    ui.checkpoints = new QCheckBox(tr("Keep chec&kpoints"), settings);
    ui.checkpoints->setObjectName(QStringLiteral("keepCheckpoints"));
    ui.checkpoints->setAccessibleName(tr("Keep checkpoints"));
    ui.trackChanges = new QCheckBox(tr("Track changes per &call"), settings);
    ui.trackChanges->setObjectName(QStringLiteral("trackChanges"));
    ui.trackChanges->setAccessibleName(tr("Track changes per call"));
    auto *history = new QWidget(settings);
    auto *historyLayout = new QHBoxLayout(history);
    historyLayout->setContentsMargins(0, 0, 0, 0);
    historyLayout->addWidget(ui.checkpoints);
    historyLayout->addWidget(ui.trackChanges);
    historyLayout->addStretch(1);
    form->addRow(tr("History:"), history);
    connect(this, &QDialog::accepted, this, [this] {
        if (m_ui->checkpoints->isEnabled() && !m_historyByListing)
            AppSettings::instance()->setNewSandboxHistory(m_ui->checkpoints->isChecked(),
                                                          m_ui->trackChanges->isChecked());
    });
    tabs->addTab(scroll, tr("Settings"));

    auto *previewPage = new QWidget(tabs);
    auto *previewLayout = new QVBoxLayout(previewPage);
    auto *previewTop = new QHBoxLayout;
    ui.previewButton = new QPushButton(tr("&Preview"), previewPage);
    ui.previewSummary = new QLabel(tr("What seeding will copy, exclude and drop."), previewPage);
    ui.previewSummary->setWordWrap(true);
    previewTop->addWidget(ui.previewButton);
    previewTop->addWidget(ui.previewSummary, 1);
    ui.preview = new QTreeWidget(previewPage);
    ui.preview->setObjectName(QStringLiteral("seedPreview"));
    ui.preview->setHeaderLabels({tr("Path"), tr("Size"), tr("Pattern")});
    ui.preview->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    ui.preview->header()->setStretchLastSection(false);
    previewLayout->addLayout(previewTop);
    previewLayout->addWidget(ui.preview, 1);
    tabs->addTab(previewPage, tr("Seed Preview"));
    ui.previewWatcher = new QFutureWatcher<SeedPlan>(this);
    connect(ui.previewButton, &QPushButton::clicked, this, &NewSandboxDialog::runSeedPreview);
    connect(tabs, &QTabWidget::currentChanged, this, [this, previewPage, tabs] {
        if (tabs->currentWidget() == previewPage && m_ui->preview->topLevelItemCount() == 0)
            runSeedPreview();
    });
    connect(ui.previewWatcher, &QFutureWatcherBase::finished, this, [this] {
        Ui &ui = *m_ui;
        ui.previewButton->setEnabled(true);
        const SeedPlan plan = ui.previewWatcher->result();
        ui.preview->clear();
        struct Group
        {
            QTreeWidgetItem *item = nullptr;
            int count = 0;
            qint64 bytes = 0;
        };
        Group groups[4];
        const QString titles[4] = {tr("To copy"), tr("Excluded"), tr("Symlinks dropped"),
                                   tr("Special files dropped")};
        for (int i = 0; i < 4; ++i) {
            groups[i].item = new QTreeWidgetItem(ui.preview);
            groups[i].item->setFirstColumnSpanned(false);
        }
        for (const SeedPlanEntry &e : plan.entries) {
            Group &g = groups[int(e.action)];
            if (e.action == SeedPlanEntry::Action::Copy && e.isDir)
                continue; // folders are implied by their files
            ++g.count;
            g.bytes += e.isDir ? 0 : e.size;
            if (g.count > kPreviewRowCap)
                continue;
            auto *row = new QTreeWidgetItem(g.item);
            row->setText(0, e.isDir ? e.path + QLatin1Char('/') : e.path);
            if (!e.isDir && e.action != SeedPlanEntry::Action::SkippedSymlink)
                row->setText(1, sizeText(e.size));
            row->setText(2, e.pattern);
        }
        for (int i = 0; i < 4; ++i) {
            Group &g = groups[i];
            g.item->setText(
                0, i == 0
                       ? tr("%1: %2 files, %3").arg(titles[i]).arg(g.count).arg(sizeText(g.bytes))
                       : tr("%1: %2").arg(titles[i]).arg(g.count));
            if (g.count > kPreviewRowCap) {
                new QTreeWidgetItem(g.item, {tr("… %1 more").arg(g.count - kPreviewRowCap)});
            }
        }
        if (!plan.errors.isEmpty()) {
            auto *errors =
                new QTreeWidgetItem(ui.preview, {tr("Errors: %1").arg(plan.errors.size())});
            for (const QString &e : plan.errors)
                new QTreeWidgetItem(errors, {e});
            errors->setExpanded(true);
        }
        groups[1].item->setExpanded(true);
        groups[2].item->setExpanded(true);
        groups[3].item->setExpanded(true);
        ui.previewSummary->setText(tr("%1 files (%2) will be copied from %3.")
                                       .arg(plan.fileCount())
                                       .arg(sizeText(plan.byteCount()), plan.sourceRoot));
        Q_EMIT seedPreviewReady();
    });

    ui.buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    ui.buttons->button(QDialogButtonBox::Ok)->setText(tr("Create"));
    connect(ui.buttons, &QDialogButtonBox::accepted, this, &NewSandboxDialog::accept);
    connect(ui.buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(ui.workspaceId, &QLineEdit::textChanged, this, &NewSandboxDialog::updateOk);

    connect(ui.backend, &QComboBox::currentTextChanged, this, &NewSandboxDialog::backendChanged);
    connect(ui.backendPages, &NewSandboxBackendPages::edited, this, &NewSandboxDialog::updateOk);
    ui.validation = new QLabel(this);
    ui.validation->setObjectName(QStringLiteral("validationMessage"));
    ui.validation->setWordWrap(true);
    ui.validation->setStyleSheet(QStringLiteral("color: #b00020;"));

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(tabs, 1);
    layout->addWidget(ui.validation);
    layout->addWidget(ui.buttons);
    setSpec(SandboxSpec());
    resize(620, 720);
}

NewSandboxDialog::~NewSandboxDialog() = default;

void NewSandboxDialog::updateOk()
{
    QString problem = m_ui->workspaceId->text().trimmed().isEmpty()
                          ? tr("The workspace id is empty.")
                          : m_ui->backendPages->missingField();
    m_ui->validation->setText(problem);
    m_ui->validation->setVisible(!problem.isEmpty());
    m_ui->buttons->button(QDialogButtonBox::Ok)->setEnabled(problem.isEmpty());
}

QString NewSandboxDialog::validationMessage() const
{
    return m_ui->validation->text();
}

void NewSandboxDialog::backendChanged(const QString &backend)
{
    Ui &ui = *m_ui;
    ui.backendBox->setTitle(tr("%1 settings").arg(backend));
    const BackendCapabilities can = BackendRegistry::capabilities(backend);
    const bool hostFolder = can.hostFolder;
    // Remote workspaces are not host folders (createBackend() names them itself); only a
    // backend that inherits the environment passes the workbench's on.
    ui.workspaceRoot->parentWidget()->setEnabled(hostFolder);
    ui.workspaceRoot->setPlaceholderText(
        hostFolder ? tr("a new folder under the temp folder (kept)")
                   : tr("on the %1 side, named by the backend").arg(backend));
    ui.inheritEnv->setEnabled(can.inheritsEnvironment);
    const bool byListing = !can.timeTravel && can.timeTravelByListing;
    ui.checkpoints->setEnabled(can.timeTravel || byListing);
    ui.trackChanges->setEnabled(can.timeTravel || byListing);
    if (byListing) {
        ui.checkpoints->setToolTip(
            tr("Off by default here: each checkpoint lists the whole remote workspace (one "
               "remote command) and brings the files the checkpoint store lacks in one archive; "
               "a restore sends them back the same way"));
        ui.trackChanges->setToolTip(
            tr("Off by default here: every call costs a listing of the whole remote workspace "
               "(one remote command) when it starts and when it ends"));
    } else {
        ui.checkpoints->setToolTip(
            tr("A baseline of the workspace at start (about one copy of it, deduplicated in the "
               "checkpoint store), checkpoints to compare, restore and fork from"));
        ui.trackChanges->setToolTip(tr("What every call changed, shell commands included (one "
                                       "inotify watch per folder); with checkpoints, each "
                                       "call's diff too"));
    }
    if (byListing != m_historyByListing) {
        m_historyByListing = byListing;
        setHistoryDefaults();
    }
    ui.killGrace->setEnabled(can.killGrace);
    ui.backendPages->showBackend(backend);
}

void NewSandboxDialog::setHistoryDefaults()
{
    // What the command line asked for, else the last choice made here (on at first) where the
    // workspace is read directly; off where every checkpoint and call costs a remote listing.
    const bool remembered = !m_historyByListing;
    m_ui->checkpoints->setChecked(m_timeTravel.checkpoints ||
                                  (remembered && AppSettings::instance()->newSandboxCheckpoints()));
    m_ui->trackChanges->setChecked(
        m_timeTravel.trackChanges ||
        (remembered && AppSettings::instance()->newSandboxTrackChanges()));
}

void NewSandboxDialog::setSpec(const SandboxSpec &spec)
{
    Ui &ui = *m_ui;
    m_readFileMaxBytes = spec.readFileMaxBytes;
    m_executeSoftReturnSeconds = spec.executeSoftReturnSeconds;
    ui.workspaceId->setText(spec.workspaceId);
    ui.backendPages->setSpec(spec);
    const int backend = ui.backend->findText(spec.backend);
    if (backend >= 0)
        ui.backend->setCurrentIndex(backend);
    backendChanged(ui.backend->currentText());
    ui.workspaceRoot->setText(spec.workspaceRoot);
    ui.seedFrom->setText(spec.seedFrom.value_or(QString()));
    ui.excludes.set(DEFAULT_SANDBOX_SEED_EXCLUDES, spec.seedExclude);
    ui.includes.set({}, spec.syncInclude.value_or(DEFAULT_SANDBOX_SYNC_INCLUDE));
    ui.syncDest->setText(spec.syncDest.value_or(QString()));
    ui.noBaseConflict->setCurrentIndex(ui.noBaseConflict->findData(int(spec.noBaseConflict)));
    ui.noTtl->setChecked(!spec.ttlSeconds.has_value());
    ui.ttl->setValue(spec.ttlSeconds.value_or(7200));
    ui.timeout->setValue(spec.local.timeout);
    ui.maxOutput->setValue(
        int(qMin<qint64>(spec.local.maxOutputBytes, std::numeric_limits<int>::max())));
    ui.killGrace->setValue(spec.local.killGraceMs);
    ui.inheritEnv->setChecked(spec.local.inheritEnv);
    m_timeTravel = spec.timeTravel;
    setHistoryDefaults();
    QStringList env;
    for (auto it = spec.local.env.cbegin(); it != spec.local.env.cend(); ++it)
        env.append(it.key() + QLatin1Char('=') + it.value());
    ui.env.set({}, env);
    updateOk();
}

SandboxSpec NewSandboxDialog::withFreeWorkspaceId(SandboxSpec spec, const QStringList &taken)
{
    const QString base = spec.workspaceId;
    for (int n = 2; taken.contains(spec.workspaceId); ++n)
        spec.workspaceId = QStringLiteral("%1-%2").arg(base).arg(n);
    return spec;
}

SandboxSpec NewSandboxDialog::spec() const
{
    const Ui &ui = *m_ui;
    SandboxSpec s;
    s.readFileMaxBytes = m_readFileMaxBytes;
    s.executeSoftReturnSeconds = m_executeSoftReturnSeconds;
    s.workspaceId = ui.workspaceId->text().trimmed();
    if (s.workspaceId.isEmpty())
        throw ValueError(tr("the workspace id is empty"));
    checkName(s.workspaceId, tr("workspace id"));
    s.backend = ui.backend->currentText();
    if (ui.workspaceRoot->isEnabledTo(ui.workspaceRoot->window()))
        s.workspaceRoot = ui.workspaceRoot->text().trimmed();
    ui.backendPages->apply(s);
    if (const QString seed = ui.seedFrom->text().trimmed(); !seed.isEmpty()) {
        // A missing seed folder would start an empty sandbox that only the audit explains.
        if (!QFileInfo(seed).isDir())
            throw ValueError(tr("the seed folder '%1' does not exist or is not a folder; pick "
                                "an existing folder or leave it empty")
                                 .arg(seed));
        s.seedFrom = seed;
    }
    // Only the extras: the sandbox merges them with the (locked) defaults itself.
    for (const QString &p : seedExcludes()) {
        if (!DEFAULT_SANDBOX_SEED_EXCLUDES.contains(p) && !s.seedExclude.contains(p))
            s.seedExclude.append(p);
    }
    const QStringList includes = syncIncludes();
    if (includes != DEFAULT_SANDBOX_SYNC_INCLUDE)
        s.syncInclude = includes;
    for (const QString &p : s.seedExclude + includes) {
        if (!GlobPattern(p).isValid())
            throw ValueError(tr("invalid glob pattern: %1").arg(p));
    }
    if (const QString dest = ui.syncDest->text().trimmed(); !dest.isEmpty())
        s.syncDest = dest;
    s.noBaseConflict = NoBaseConflict(ui.noBaseConflict->currentData().toInt());
    s.ttlSeconds = ui.noTtl->isChecked() ? std::nullopt : std::optional(ui.ttl->value());
    s.local.timeout = ui.timeout->value();
    s.local.maxOutputBytes = ui.maxOutput->value();
    s.local.killGraceMs = ui.killGrace->value();
    s.local.inheritEnv = ui.inheritEnv->isChecked();
    s.timeTravel = m_timeTravel;
    s.timeTravel.checkpoints = ui.checkpoints->isEnabled() && ui.checkpoints->isChecked();
    s.timeTravel.trackChanges = ui.trackChanges->isEnabled() && ui.trackChanges->isChecked();
    if (!s.timeTravel.checkpoints) { // what needs a checkpoint store goes with it
        s.timeTravel.agentTools = false;
        s.timeTravel.autoCheckpointAgents.clear();
    }
    for (const QString &line : ui.env.items()) {
        const qsizetype eq = line.indexOf(QLatin1Char('='));
        if (eq <= 0)
            throw ValueError(tr("environment entry '%1' is not NAME=VALUE").arg(line));
        s.local.env.insert(line.left(eq).trimmed(), line.mid(eq + 1));
    }
    return s;
}

QStringList NewSandboxDialog::seedExcludes() const
{
    return m_ui->excludes.items();
}

QStringList NewSandboxDialog::syncIncludes() const
{
    return m_ui->includes.items();
}

void NewSandboxDialog::addSeedExclude(const QString &pattern)
{
    m_ui->excludes.add(pattern);
}

void NewSandboxDialog::addSyncInclude(const QString &pattern)
{
    m_ui->includes.add(pattern);
}

QTreeWidget *NewSandboxDialog::seedPreview() const
{
    return m_ui->preview;
}

void NewSandboxDialog::runSeedPreview()
{
    Ui &ui = *m_ui;
    const QString source = ui.seedFrom->text().trimmed();
    if (source.isEmpty()) {
        ui.preview->clear();
        ui.previewSummary->setText(tr("Choose a folder to seed from first."));
        return;
    }
    if (ui.previewWatcher->isRunning())
        return;
    ui.previewButton->setEnabled(false);
    ui.previewSummary->setText(tr("Planning…"));
    const GlobSet excludes(seedExcludes());
    ui.previewWatcher->setFuture(
        QtConcurrent::run([source, excludes] { return planSeed(source, excludes); }));
}

void NewSandboxDialog::accept()
{
    try {
        (void)spec();
    } catch (const SandboxError &e) {
        // Said in the dialog, beside the fields: no modal box on top of a modal dialog.
        m_ui->validation->setText(e.message());
        m_ui->validation->setVisible(true);
        return;
    }
    QDialog::accept();
}

} // namespace elsai
