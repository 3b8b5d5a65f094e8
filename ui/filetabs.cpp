// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "filetabs.h"

#include <QEvent>
#include <QSyntaxHighlighter>

#include "appsettings.h"
#include "codeeditor.h"
#include "confirm.h"
#include "displaytext.h"
#include "errors.h"
#include "findbar.h"
#include "highlighter.h"
#include "icons.h"
#include "modelroles.h"
#include "sandboxcontroller.h"
#include "workspacetreemodel.h"

#include <QAction>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPointer>
#include <QPushButton>
#include <QScrollBar>
#include <QStringDecoder>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent>

namespace elsai {

namespace {

/// Calls `fn(future)` on `context`'s thread when the future finishes (never if `context`
/// is gone first).
template<typename T, typename Fn>
void whenDone(QObject *context, const QFuture<T> &future, Fn fn)
{
    auto *watcher = new QFutureWatcher<T>(context);
    QObject::connect(watcher, &QFutureWatcherBase::finished, context,
                     [watcher, fn = std::move(fn)] {
                         watcher->deleteLater();
                         fn(watcher->future());
                     });
    watcher->setFuture(future);
}

QString errorText(std::exception_ptr error)
{
    const auto e = futureError(error);
    return e ? e->first + QStringLiteral(": ") + e->second : QString();
}

/// One read of a workspace file, never throwing: the size is checked (stat) before reading.
struct ReadOutcome
{
    QByteArray bytes;
    qint64 size = -1;
    qint64 mtimeMs = -1; ///< of the stat taken before the read (never newer than the bytes)
    bool tooLarge = false;
    QString error;
};

/// Reads off the GUI thread straight from the backend: the periodic re-reads must not report
/// a vanished file through operationFailed every few seconds.
QFuture<ReadOutcome> quietRead(SandboxController *controller, const QString &workspaceId,
                               const QString &path)
{
    const SandboxPtr sb = controller->sandbox(workspaceId);
    return QtConcurrent::run(controller->pool(), [sb, path] {
        ReadOutcome out;
        try {
            const BackendPtr b = sb ? sb->backend() : BackendPtr();
            if (!b) {
                out.error = QObject::tr("the sandbox is not running");
                return out;
            }
            const FileInfo info = b->stat(path);
            if (info.isDir) {
                out.error = QObject::tr("%1 is a folder").arg(path);
                return out;
            }
            out.size = info.size.value_or(-1);
            out.mtimeMs = info.mtimeMs;
            if (out.size > FileTabs::largeFileLimit()) {
                out.tooLarge = true;
                return out;
            }
            out.bytes = b->readFile(path);
            out.size = out.bytes.size();
            if (out.size > FileTabs::largeFileLimit()) {
                out.tooLarge = true;
                out.bytes.clear();
            }
        } catch (...) {
            out.error = describeCurrentError().display();
        }
        return out;
    });
}

/// The text of `bytes` when it is text: no NUL in the first 8 KiB and valid UTF-8.
std::optional<QString> decodeText(const QByteArray &bytes)
{
    if (bytes.left(8192).contains('\0'))
        return std::nullopt;
    QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    QString text = decoder.decode(bytes);
    if (decoder.hasError())
        return std::nullopt;
    return text;
}

QString hexDump(const QByteArray &bytes, qint64 limit)
{
    const qint64 shown = qMin<qint64>(bytes.size(), limit);
    QString out;
    out.reserve(int(shown / 16 + 1) * 78);
    for (qint64 offset = 0; offset < shown; offset += 16) {
        QString hex;
        QString ascii;
        for (int i = 0; i < 16; ++i) {
            if (offset + i < shown) {
                const auto c = uchar(bytes.at(offset + i));
                hex += QStringLiteral("%1 ").arg(c, 2, 16, QLatin1Char('0'));
                ascii += (c >= 0x20 && c < 0x7f) ? QLatin1Char(char(c)) : QLatin1Char('.');
            } else {
                hex += QStringLiteral("   ");
            }
            if (i == 7)
                hex += QLatin1Char(' ');
        }
        out += QStringLiteral("%1  %2 |%3|\n").arg(offset, 8, 16, QLatin1Char('0')).arg(hex, ascii);
    }
    return out;
}

} // namespace

/// One tab: an optional "changed on disk" bar, a status line, and the content.
class FileTab : public QWidget
{
public:
    FileTab(const QString &workspaceId, const QString &path, QWidget *parent)
        : QWidget(parent), workspaceId(workspaceId), path(path)
    {
        auto *layout = new QVBoxLayout(this);
        layout->setContentsMargins(0, 0, 0, 0);
        layout->setSpacing(0);

        bar = new QFrame(this);
        bar->setFrameShape(QFrame::StyledPanel);
        bar->setAutoFillBackground(true);
        QPalette pal = bar->palette();
        pal.setColor(QPalette::Window, pal.color(QPalette::ToolTipBase));
        pal.setColor(QPalette::WindowText, pal.color(QPalette::ToolTipText));
        bar->setPalette(pal);
        auto *barLayout = new QHBoxLayout(bar);
        barLabel = new QLabel(bar);
        barLabel->setWordWrap(true);
        barLabel->setAccessibleName(FileTabs::tr("Changed on disk"));
        reloadButton = new QPushButton(FileTabs::tr("Reload"), bar);
        keepButton = new QPushButton(FileTabs::tr("Keep mine"), bar);
        barLayout->addWidget(barLabel, 1);
        barLayout->addWidget(reloadButton);
        barLayout->addWidget(keepButton);
        bar->hide();
        layout->addWidget(bar);

        status = new QLabel(this);
        status->setAccessibleName(FileTabs::tr("File status"));
        status->setWordWrap(true);
        status->setContentsMargins(6, 3, 6, 3);
        status->hide();
        layout->addWidget(status);

        message = new QLabel(FileTabs::tr("Loading %1…").arg(path), this);
        message->setAlignment(Qt::AlignCenter);
        message->setWordWrap(true);
        message->setTextInteractionFlags(Qt::TextSelectableByMouse);
        message->setAccessibleName(FileTabs::tr("File"));
        layout->addWidget(message, 1);
    }

    bool isModified() const
    {
        return kind == FileTabs::TabKind::Text && editor && editor->document()->isModified();
    }
    QByteArray editorBytes() const
    {
        return editor ? editor->toPlainText().toUtf8() : QByteArray();
    }
    QString fileName() const { return QFileInfo(path).fileName(); }

    void setContent(QWidget *widget)
    {
        if (content)
            content->deleteLater();
        content = widget;
        message->setVisible(widget == nullptr);
        if (widget) {
            static_cast<QVBoxLayout *>(layout())->addWidget(widget, 1);
            widget->show(); // now, not at the layout's next pass: focus and bars act at once
        }
    }

    void showMessage(FileTabs::TabKind newKind, const QString &text)
    {
        kind = newKind;
        editor = nullptr;
        findBar = nullptr;
        goToBar = nullptr;
        setContent(nullptr);
        message->setText(text);
    }

    const QString workspaceId;
    const QString path;
    FileTabs::TabKind kind = FileTabs::TabKind::Loading;
    QFrame *bar;
    QLabel *barLabel;
    QPushButton *reloadButton;
    QPushButton *keepButton;
    QLabel *status;
    QLabel *message;
    QWidget *content = nullptr;
    CodeEditor *editor = nullptr;   ///< text tabs
    FindBar *findBar = nullptr;     ///< text tabs, under the editor
    GoToLineBar *goToBar = nullptr; ///< text tabs
    QString highlighter;
    QByteArray diskBytes;    ///< the file as last read or saved (what the editor started from)
    QByteArray pendingBytes; ///< a newer version on disk while the prompt bar is shown
    int generation = 0;      ///< bumped by saves: re-reads started before are stale
    /// Stat stamp of diskBytes (-1: unknown, the next check reads); a stat that matches it
    /// skips the re-read.
    qint64 diskMtimeMs = -1;
    qint64 diskSize = -1;
    bool checking = false;
    bool saving = false;
    bool focusWhenShown = false; ///< openFileAndFocus(): the keyboard moves in once it loads
};

FileTabs::FileTabs(SandboxController *controller, QWidget *parent)
    : QTabWidget(parent), m_controller(controller), m_checkTimer(new QTimer(this)),
      m_soonTimer(new QTimer(this))
{
    setTabsClosable(true);
    setMovable(true);
    setDocumentMode(true);
    connect(this, &QTabWidget::tabCloseRequested, this, [this](int index) { closeTab(index); });

    m_checkTimer->setInterval(2000);
    connect(m_checkTimer, &QTimer::timeout, this, &FileTabs::checkForChanges);
    m_checkTimer->start();
    // Tree updates come from the audit stream: a change there triggers a re-read soon.
    m_soonTimer->setSingleShot(true);
    m_soonTimer->setInterval(150);
    connect(m_soonTimer, &QTimer::timeout, this, &FileTabs::checkForChanges);

    createEditActions();
    connect(this, &QTabWidget::currentChanged, this, &FileTabs::updateEditActions);
    // With several sandboxes open, each tab says which one its file is in.
    connect(controller, &SandboxController::sandboxAdded, this, &FileTabs::updateTitles);
    connect(controller, &SandboxController::sandboxRemoved, this, &FileTabs::updateTitles);
    AppSettings *settings = AppSettings::instance();
    connect(settings, &AppSettings::editorFontChanged, this, &FileTabs::applyEditorFont);
    connect(settings, &AppSettings::wordWrapChanged, this, [this](bool wrap) {
        m_actions[int(EditAction::WordWrap)]->setChecked(wrap);
        for (int i = 0; i < count(); ++i) {
            if (FileTab *tab = tabAt(i); tab && tab->editor)
                tab->editor->setWordWrap(wrap);
        }
    });
    updateEditActions();
}

FileTabs::~FileTabs() = default;

void FileTabs::createEditActions()
{
    struct Entry
    {
        EditAction which;
        QString text;
        QKeySequence key;
        const char *name;
        const char *icon;
    };
    const Entry entries[] = {
        {EditAction::Find, tr("&Find…"), QKeySequence::Find, "actionFind", "edit-find"},
        {EditAction::FindNext, tr("Find &Next"), QKeySequence(Qt::Key_F3), "actionFindNext",
         "go-down"},
        {EditAction::FindPrevious, tr("Find Pre&vious"), QKeySequence(Qt::SHIFT | Qt::Key_F3),
         "actionFindPrevious", "go-up"},
        {EditAction::Replace, tr("&Replace…"), QKeySequence(Qt::CTRL | Qt::Key_H), "actionReplace",
         "edit-find-replace"},
        {EditAction::GoToLine, tr("&Go to Line…"), QKeySequence(Qt::CTRL | Qt::Key_G),
         "actionGoToLine", "go-jump"},
        {EditAction::WordWrap, tr("&Word Wrap"), QKeySequence(Qt::ALT | Qt::Key_Z),
         "actionWordWrap", "format-text-wrap"},
    };
    for (const Entry &e : entries) {
        auto *a = new QAction(e.text, this);
        a->setObjectName(QLatin1String(e.name));
        a->setShortcut(e.key);
        a->setIcon(themeIcon(QLatin1String(e.icon)));
        // Active where the tabs have focus (F3 in the console finds nothing in a file); the
        // menus reach them from anywhere.
        a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        addAction(a);
        m_actions[int(e.which)] = a;
    }
    QAction *wrap = m_actions[int(EditAction::WordWrap)];
    wrap->setCheckable(true);
    wrap->setChecked(AppSettings::instance()->wordWrap());
    connect(wrap, &QAction::toggled, AppSettings::instance(), &AppSettings::setWordWrap);
    connect(m_actions[int(EditAction::Find)], &QAction::triggered, this,
            [this] { showFindBar(false); });
    connect(m_actions[int(EditAction::Replace)], &QAction::triggered, this,
            [this] { showFindBar(true); });
    connect(m_actions[int(EditAction::FindNext)], &QAction::triggered, this, [this] {
        if (FindBar *bar = findBar(currentIndex()))
            bar->findField()->text().isEmpty() ? showFindBar(false) : void(bar->findNext());
    });
    connect(m_actions[int(EditAction::FindPrevious)], &QAction::triggered, this, [this] {
        if (FindBar *bar = findBar(currentIndex()))
            bar->findField()->text().isEmpty() ? showFindBar(false) : void(bar->findPrevious());
    });
    connect(m_actions[int(EditAction::GoToLine)], &QAction::triggered, this, [this] {
        if (FileTab *tab = tabAt(currentIndex()); tab && tab->goToBar) {
            if (tab->findBar)
                tab->findBar->hide();
            tab->goToBar->showBar();
        }
    });
}

QAction *FileTabs::editAction(EditAction which) const
{
    return m_actions[int(which)];
}

void FileTabs::updateEditActions()
{
    const bool text = tabKind(currentIndex()) == TabKind::Text && count() > 0;
    for (QAction *a : m_actions) {
        if (a != m_actions[int(EditAction::WordWrap)])
            a->setEnabled(text);
    }
    const CodeEditor *ed = codeEditor(currentIndex());
    m_actions[int(EditAction::Replace)]->setEnabled(ed && !ed->isReadOnly());
}

void FileTabs::showFindBar(bool replace)
{
    FileTab *tab = tabAt(currentIndex());
    if (!tab || !tab->findBar)
        return;
    if (tab->goToBar)
        tab->goToBar->hide();
    tab->findBar->showBar(replace && !tab->editor->isReadOnly());
}

void FileTabs::applyEditorFont(const QFont &font)
{
    for (int i = 0; i < count(); ++i) {
        FileTab *tab = tabAt(i);
        if (!tab || !tab->content)
            continue;
        if (tab->editor)
            tab->editor->setFont(font);
        else if (auto *hex = tab->content->findChild<QPlainTextEdit *>())
            hex->setFont(font);
    }
}

CodeEditor *FileTabs::codeEditor(int index) const
{
    const FileTab *tab = tabAt(index);
    return tab && tab->kind == TabKind::Text ? tab->editor : nullptr;
}

FindBar *FileTabs::findBar(int index) const
{
    const FileTab *tab = tabAt(index);
    return tab && tab->kind == TabKind::Text ? tab->findBar : nullptr;
}

GoToLineBar *FileTabs::goToLineBar(int index) const
{
    const FileTab *tab = tabAt(index);
    return tab && tab->kind == TabKind::Text ? tab->goToBar : nullptr;
}

void FileTabs::changeEvent(QEvent *event)
{
    QTabWidget::changeEvent(event);
    if (event->type() != QEvent::PaletteChange)
        return;
    const bool dark = AppSettings::isDark(palette());
    for (int i = 0; i < count(); ++i) {
        FileTab *tab = tabAt(i);
        if (!tab || tab->kind != TabKind::Text || !tab->editor)
            continue;
        QTextDocument *doc = tab->editor->document();
        qDeleteAll(doc->findChildren<QSyntaxHighlighter *>(Qt::FindDirectChildrenOnly));
        tab->highlighter = attachHighlighter(doc, tab->fileName(), dark);
    }
}

void FileTabs::tabInserted(int index)
{
    QTabWidget::tabInserted(index);
    Q_EMIT tabCountChanged(count());
}

void FileTabs::tabRemoved(int index)
{
    QTabWidget::tabRemoved(index);
    Q_EMIT tabCountChanged(count());
}

FileTab *FileTabs::tabAt(int index) const
{
    return dynamic_cast<FileTab *>(widget(index));
}

int FileTabs::indexOf(const QString &workspaceId, const QString &path) const
{
    for (int i = 0; i < count(); ++i) {
        const FileTab *tab = tabAt(i);
        if (tab && tab->workspaceId == workspaceId && tab->path == path)
            return i;
    }
    return -1;
}

FileTabs::TabKind FileTabs::tabKind(int index) const
{
    const FileTab *tab = tabAt(index);
    return tab ? tab->kind : TabKind::Error;
}

bool FileTabs::isTabModified(int index) const
{
    const FileTab *tab = tabAt(index);
    return tab && tab->isModified();
}

QPlainTextEdit *FileTabs::editor(int index) const
{
    const FileTab *tab = tabAt(index);
    return tab && tab->kind == TabKind::Text ? tab->editor : nullptr;
}

QString FileTabs::tabMessage(int index) const
{
    const FileTab *tab = tabAt(index);
    if (!tab)
        return {};
    if (tab->kind == TabKind::Hex)
        return tab->content->findChild<QPlainTextEdit *>()->toPlainText();
    return tab->message->text();
}

QString FileTabs::highlighterName(int index) const
{
    const FileTab *tab = tabAt(index);
    return tab ? tab->highlighter : QString();
}

bool FileTabs::hasChangePrompt(int index) const
{
    const FileTab *tab = tabAt(index);
    return tab && !tab->bar->isHidden();
}

void FileTabs::setChangeCheckInterval(int ms)
{
    m_checkTimer->start(ms);
}

int FileTabs::changeCheckInterval() const
{
    return m_checkTimer->interval();
}

void FileTabs::openFile(const QString &workspaceId, const QString &path)
{
    if (const int existing = indexOf(workspaceId, path); existing >= 0) {
        setCurrentIndex(existing);
        return;
    }
    auto *tab = new FileTab(workspaceId, path, this);
    connect(tab->reloadButton, &QPushButton::clicked, this,
            [this, tab] { reloadFromDisk(indexOf(tab)); });
    connect(tab->keepButton, &QPushButton::clicked, this, [this, tab] { keepMine(indexOf(tab)); });
    const int index = addTab(tab, tab->fileName());
    setTabToolTip(index, workspaceId + QLatin1Char(':') + path);
    setCurrentIndex(index);
    watchWorkspace(workspaceId);
    load(tab);
}

void FileTabs::openFileAndFocus(const QString &workspaceId, const QString &path)
{
    const bool wasOpen = indexOf(workspaceId, path) >= 0;
    openFile(workspaceId, path);
    FileTab *tab = tabAt(indexOf(workspaceId, path));
    if (!tab)
        return;
    if (wasOpen && !tab->checking && tab->content)
        focusTab(tab);
    else
        tab->focusWhenShown = true;
}

void FileTabs::focusTab(FileTab *tab)
{
    tab->focusWhenShown = false;
    if (tab->editor)
        tab->editor->setFocus(Qt::OtherFocusReason);
    else if (tab->content)
        tab->content->setFocus(Qt::OtherFocusReason);
    else
        tab->setFocus(Qt::OtherFocusReason);
}

void FileTabs::watchWorkspace(const QString &workspaceId)
{
    WorkspaceTreeModel *tree = m_controller->treeModel(workspaceId);
    if (!tree || tree->property("elsai_fileTabsWatched").toBool())
        return;
    tree->setProperty("elsai_fileTabsWatched", true);
    auto soon = [this] { m_soonTimer->start(); };
    connect(tree, &QAbstractItemModel::dataChanged, this, soon);
    connect(tree, &QAbstractItemModel::rowsInserted, this, soon);
    connect(tree, &QAbstractItemModel::rowsRemoved, this, soon);
}

void FileTabs::load(FileTab *tab)
{
    const QPointer<FileTab> guard(tab);
    // The tree usually knows the size: refuse a big file without reading a byte of it.
    qint64 knownSize = -1;
    if (WorkspaceTreeModel *tree = m_controller->treeModel(tab->workspaceId)) {
        const QVariant size = tree->indexForPath(tab->path).data(Roles::SizeRole);
        if (size.isValid())
            knownSize = size.toLongLong();
    }
    if (knownSize > largeFileLimit()) {
        tab->showMessage(
            TabKind::Refused,
            tr("%1 is %2; files over %3 are not opened here — download it instead")
                .arg(tab->fileName(), sizeText(knownSize), sizeText(largeFileLimit())));
        Q_EMIT fileOpened(tab->workspaceId, tab->path);
        return;
    }
    auto onLoaded = [this, guard](const ReadOutcome &out) {
        if (!guard)
            return;
        FileTab *tab = guard;
        if (!out.error.isEmpty()) {
            tab->showMessage(TabKind::Error, tr("Cannot open %1: %2").arg(tab->path, out.error));
            Q_EMIT fileError(tab->workspaceId, tab->path, out.error);
            return;
        }
        if (out.tooLarge) {
            tab->showMessage(
                TabKind::Refused,
                tr("%1 is %2; files over %3 are not opened here — download it "
                   "instead")
                    .arg(tab->fileName(), sizeText(out.size), sizeText(largeFileLimit())));
        } else {
            showContent(tab, out.bytes);
            tab->diskMtimeMs = out.mtimeMs;
            tab->diskSize = out.mtimeMs >= 0 ? out.size : -1;
        }
        if (tab->focusWhenShown && tab == currentWidget())
            focusTab(tab);
        Q_EMIT fileOpened(tab->workspaceId, tab->path);
    };
    if (knownSize >= 0) {
        // Size known and acceptable: the controller's read (failures reach operationFailed).
        whenDone(this, m_controller->readFile(tab->workspaceId, tab->path),
                 [onLoaded](const QFuture<QByteArray> &f) {
                     ReadOutcome out;
                     try {
                         out.bytes = f.result();
                         out.size = out.bytes.size();
                         out.tooLarge = out.size > largeFileLimit();
                     } catch (...) {
                         out.error = errorText(std::current_exception());
                     }
                     onLoaded(out);
                 });
    } else {
        whenDone(this, quietRead(m_controller, tab->workspaceId, tab->path),
                 [onLoaded](const QFuture<ReadOutcome> &f) { onLoaded(f.result()); });
    }
}

void FileTabs::showContent(FileTab *tab, const QByteArray &bytes)
{
    tab->diskBytes = bytes;
    tab->pendingBytes.clear();
    tab->bar->hide();
    tab->status->hide();
    const std::optional<QString> text = decodeText(bytes);
    const QFont mono = AppSettings::instance()->editorFont();
    if (!text) {
        auto *box = new QWidget(tab);
        auto *layout = new QVBoxLayout(box);
        layout->setContentsMargins(0, 0, 0, 0);
        auto *note = new QLabel(box);
        note->setContentsMargins(6, 3, 6, 3);
        note->setText(bytes.size() > hexViewLimit()
                          ? tr("Binary file, %1; showing the first %2 (read-only).")
                                .arg(sizeText(bytes.size()), sizeText(hexViewLimit()))
                          : tr("Binary file, %1 (read-only).").arg(sizeText(bytes.size())));
        auto *view = new QPlainTextEdit(box);
        view->setObjectName(QStringLiteral("hexView"));
        view->setAccessibleName(tr("Hex view"));
        view->setReadOnly(true);
        view->setFont(mono);
        view->setLineWrapMode(QPlainTextEdit::NoWrap);
        view->setPlainText(hexDump(bytes, hexViewLimit()));
        layout->addWidget(note);
        layout->addWidget(view, 1);
        tab->kind = TabKind::Hex;
        tab->editor = nullptr;
        tab->findBar = nullptr;
        tab->goToBar = nullptr;
        tab->highlighter.clear();
        tab->setContent(box);
        updateTitle(tab);
        updateEditActions();
        return;
    }
    if (tab->kind == TabKind::Text && tab->editor) {
        // Reload in place: keep the cursor and the scroll position.
        CodeEditor *ed = tab->editor;
        const int pos = ed->textCursor().position();
        const int vscroll = ed->verticalScrollBar()->value();
        const int hscroll = ed->horizontalScrollBar()->value();
        ed->setPlainText(*text);
        QTextCursor cursor = ed->textCursor();
        cursor.setPosition(qMin(pos, ed->document()->characterCount() - 1));
        ed->setTextCursor(cursor);
        ed->verticalScrollBar()->setValue(vscroll);
        ed->horizontalScrollBar()->setValue(hscroll);
        ed->document()->setModified(false);
        updateTitle(tab);
        return;
    }
    // The editor with its find and go-to-line bars under it.
    auto *box = new QWidget(tab);
    auto *layout = new QVBoxLayout(box);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    auto *ed = new CodeEditor(box);
    ed->setFont(mono);
    ed->setWordWrap(AppSettings::instance()->wordWrap());
    ed->setAccessibleName(tr("Editor: %1").arg(tab->path));
    tab->highlighter =
        attachHighlighter(ed->document(), tab->fileName(), AppSettings::isDark(palette()));
    ed->setPlainText(*text);
    ed->document()->setModified(false);
    connect(ed->document(), &QTextDocument::modificationChanged, this,
            [this, tab] { updateTitle(tab); });
    layout->addWidget(ed, 1);
    tab->goToBar = new GoToLineBar(ed, box);
    tab->findBar = new FindBar(ed, box);
    layout->addWidget(tab->goToBar);
    layout->addWidget(tab->findBar);
    tab->kind = TabKind::Text;
    tab->editor = ed;
    tab->setContent(box);
    tab->setFocusProxy(ed); // focusing the tab (Ctrl+Tab, a click on it) focuses the text
    updateTitle(tab);
    updateEditActions();
}

void FileTabs::updateTitles()
{
    for (int i = 0; i < count(); ++i) {
        if (FileTab *tab = tabAt(i))
            updateTitle(tab);
    }
}

QString FileTabs::tabTitle(const QString &fileName, const QString &workspaceId, bool modified,
                           bool severalSandboxes)
{
    QString title = severalSandboxes ? tr("%1 — %2").arg(fileName, workspaceId) : fileName;
    if (modified)
        title += QStringLiteral(" *");
    return title;
}

void FileTabs::updateTitle(FileTab *tab)
{
    const int index = indexOf(tab);
    if (index < 0)
        return;
    // Mnemonic-safe: a file named "&x" shows its ampersand.
    QString title = tabTitle(tab->fileName(), tab->workspaceId, tab->isModified(),
                             m_controller->workspaceIds().size() > 1);
    setTabText(index, title.replace(QLatin1Char('&'), QStringLiteral("&&")));
}

bool FileTabs::saveCurrent()
{
    FileTab *tab = tabAt(currentIndex());
    if (!tab || tab->kind != TabKind::Text || !tab->isModified() || tab->saving)
        return false;
    save(tab, false);
    return true;
}

void FileTabs::save(FileTab *tab, bool closeAfter)
{
    const QByteArray bytes = tab->editorBytes();
    tab->saving = true;
    ++tab->generation;
    const QPointer<FileTab> guard(tab);
    whenDone(this, m_controller->writeFile(tab->workspaceId, tab->path, bytes),
             [this, guard, bytes, closeAfter](QFuture<void> f) {
                 if (!guard)
                     return;
                 FileTab *tab = guard;
                 tab->saving = false;
                 ++tab->generation;
                 try {
                     f.waitForFinished();
                 } catch (...) {
                     const QString err = errorText(std::current_exception());
                     tab->status->setText(tr("Save failed: %1").arg(err));
                     tab->status->show();
                     Q_EMIT fileError(tab->workspaceId, tab->path, err);
                     return;
                 }
                 tab->diskBytes = bytes;
                 tab->diskMtimeMs = tab->diskSize = -1; // our write: the next check reads it
                 tab->pendingBytes.clear();
                 tab->bar->hide();
                 tab->status->hide();
                 if (tab->editorBytes() == bytes)
                     tab->editor->document()->setModified(false);
                 Q_EMIT fileSaved(tab->workspaceId, tab->path);
                 if (closeAfter) {
                     removeTab(indexOf(tab));
                     tab->deleteLater();
                 }
             });
}

bool FileTabs::closeTab(int index)
{
    FileTab *tab = tabAt(index);
    if (!tab)
        return false;
    if (tab->isModified()) {
        Confirmation q;
        q.kind = QStringLiteral("unsaved");
        q.title = tr("Close %1").arg(tab->fileName());
        q.text = tr("%1 in '%2' has unsaved changes. Save them before closing? Discard loses "
                    "them.")
                     .arg(tab->path, tab->workspaceId);
        q.offerSave = true;
        const ConfirmAnswer answer = confirm(this, q);
        if (answer == ConfirmAnswer::Cancel)
            return false;
        if (answer == ConfirmAnswer::Save) {
            if (!tab->saving)
                save(tab, true); // closes once written; stays open if the save fails
            return true;
        }
    }
    removeTab(index);
    tab->deleteLater();
    return true;
}

QStringList FileTabs::modifiedFiles() const
{
    QStringList files;
    for (int i = 0; i < count(); ++i) {
        if (const FileTab *tab = tabAt(i); tab && tab->isModified())
            files.append(tr("%1 (%2)").arg(tab->path, tab->workspaceId));
    }
    return files;
}

bool FileTabs::saveAllAndWait(QString *error)
{
    bool ok = true;
    for (int i = 0; i < count(); ++i) {
        FileTab *tab = tabAt(i);
        if (!tab || !tab->isModified())
            continue;
        const QByteArray bytes = tab->editorBytes();
        try {
            m_controller->writeFile(tab->workspaceId, tab->path, bytes).waitForFinished();
        } catch (...) {
            const QString err = errorText(std::current_exception());
            tab->status->setText(tr("Save failed: %1").arg(err));
            tab->status->show();
            if (ok && error)
                *error = tr("%1: %2").arg(tab->path, err);
            ok = false;
            continue;
        }
        ++tab->generation;
        tab->diskBytes = bytes;
        tab->diskMtimeMs = tab->diskSize = -1;
        tab->editor->document()->setModified(false);
        Q_EMIT fileSaved(tab->workspaceId, tab->path);
    }
    return ok;
}

void FileTabs::checkForChanges()
{
    for (int i = 0; i < count(); ++i) {
        FileTab *tab = tabAt(i);
        if (!tab || tab->checking || tab->saving ||
            (tab->kind != TabKind::Text && tab->kind != TabKind::Hex))
            continue;
        tab->checking = true;
        const QPointer<FileTab> guard(tab);
        // A stat first: the file is read again only when its size or mtime moved.
        whenDone(this, m_controller->statFile(tab->workspaceId, tab->path),
                 [this, guard](const QFuture<FileInfo> &f) {
                     if (!guard)
                         return;
                     std::optional<FileInfo> info;
                     try {
                         info = f.result();
                     } catch (...) {
                         // Missing or unreadable: the read below says so in the tab.
                     }
                     if (info && info->mtimeMs == guard->diskMtimeMs &&
                         info->size.value_or(-1) == guard->diskSize) {
                         guard->checking = false;
                         return;
                     }
                     reread(guard);
                 });
    }
}

void FileTabs::reread(FileTab *tab)
{
    ++m_changeReads;
    const int generation = tab->generation;
    const QPointer<FileTab> guard(tab);
    whenDone(this, quietRead(m_controller, tab->workspaceId, tab->path),
             [this, guard, generation](const QFuture<ReadOutcome> &f) {
                 if (!guard)
                     return;
                 guard->checking = false;
                 if (guard->generation != generation || guard->saving)
                     return; // a save happened meanwhile: this read may predate it
                 const ReadOutcome out = f.result();
                 if (!out.error.isEmpty() || out.tooLarge) {
                     guard->status->setText(out.tooLarge
                                                ? tr("The file grew beyond %1 on disk; this tab "
                                                     "shows the earlier content.")
                                                      .arg(sizeText(largeFileLimit()))
                                                : tr("Cannot re-read the file: %1").arg(out.error));
                     guard->status->show();
                     guard->diskMtimeMs = guard->diskSize = -1; // check again next time
                     return;
                 }
                 guard->status->hide();
                 onRead(guard, out.bytes);
                 // The stamp belongs to what was read, whether shown or waiting in the
                 // prompt: the same file is not read again until it changes again.
                 guard->diskMtimeMs = out.mtimeMs;
                 guard->diskSize = out.size;
             });
}

void FileTabs::onRead(FileTab *tab, const QByteArray &bytes)
{
    if (bytes == tab->diskBytes) {
        return;
    }
    if (tab->kind == TabKind::Hex || !tab->isModified()) {
        if (tab->kind == TabKind::Text && tab->editorBytes() == bytes) {
            tab->diskBytes = bytes;
            return;
        }
        showContent(tab, bytes);
        Q_EMIT fileReloaded(tab->workspaceId, tab->path);
        return;
    }
    // Modified tab: never overwrite either side silently.
    if (tab->editorBytes() == bytes) {
        tab->diskBytes = bytes; // someone wrote exactly our edits
        tab->pendingBytes.clear();
        tab->bar->hide();
        tab->editor->document()->setModified(false);
        return;
    }
    if (!tab->bar->isHidden() && bytes == tab->pendingBytes)
        return;
    tab->pendingBytes = bytes;
    tab->barLabel->setText(tr("%1 changed in the workspace while you were editing it. Reload "
                              "it (your edits are lost) or keep your version (saving will "
                              "overwrite the file)?")
                               .arg(tab->fileName()));
    tab->bar->show();
    Q_EMIT externalChangeDetected(tab->workspaceId, tab->path);
}

void FileTabs::reloadFromDisk(int index)
{
    FileTab *tab = tabAt(index);
    if (!tab || tab->bar->isHidden())
        return;
    const QByteArray bytes = tab->pendingBytes;
    if (tab->editor)
        tab->editor->document()->setModified(false);
    showContent(tab, bytes);
    Q_EMIT fileReloaded(tab->workspaceId, tab->path);
}

void FileTabs::keepMine(int index)
{
    FileTab *tab = tabAt(index);
    if (!tab || tab->bar->isHidden())
        return;
    // The disk version has been seen: only a further change prompts again.
    tab->diskBytes = tab->pendingBytes;
    tab->pendingBytes.clear();
    tab->bar->hide();
}

} // namespace elsai
