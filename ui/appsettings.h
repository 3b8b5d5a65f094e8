// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QFont>
#include <QObject>
#include <QPalette>
#include <QSettings>
#include <QStringList>

namespace elsai {

/// The keys of the window's settings (QSettings scope `elsai/workbench`), in one place so that
/// every widget reads the same value: the editor font is also the console's and a terminal's.
namespace SettingsKey {
inline constexpr char EditorFont[] = "editor/font";         ///< QFont::toString()
inline constexpr char EditorWordWrap[] = "editor/wordWrap"; ///< bool
inline constexpr char Theme[] = "appearance/theme";         ///< "system", "light", "dark"
inline constexpr char WindowGeometry[] = "window/geometry"; ///< QWidget::saveGeometry()
/// QMainWindow::saveState(layoutVersion): a state of another version is ignored.
inline constexpr char WindowState[] = "window/state";
inline constexpr char RecentSandboxes[] = "recent/sandboxes";     ///< JSON objects, newest first
inline constexpr char RecentSeedFolders[] = "recent/seedFolders"; ///< paths, newest first
/// The New Sandbox dialog's "Keep checkpoints" and "Track changes per call" (bool, default on;
/// for the backends that support them).
inline constexpr char NewSandboxCheckpoints[] = "newSandbox/checkpoints";
inline constexpr char NewSandboxTrackChanges[] = "newSandbox/trackChanges";
} // namespace SettingsKey

/// The window's application-wide preferences: theme, editor font, word wrap, recent lists.
/// Setters persist the value and emit the matching signal, so open widgets follow live
/// (connect to AppSettings::instance()). One instance, owned by the application object.
class AppSettings : public QObject
{
    Q_OBJECT

public:
    enum class Theme { System, Light, Dark };
    /// The version of the saved dock layout: bump it when the default layout changes, so
    /// that a layout saved by an older window is replaced by the new default.
    static constexpr int layoutVersion = 3;
    /// Entries kept in each recent list.
    static constexpr int recentLimit = 8;

    static AppSettings *instance();
    /// The settings store of the window (organization "elsai", application "workbench").
    static QSettings store();

    Theme theme() const;
    void setTheme(Theme theme);
    static QString themeName(Theme theme); ///< "system", "light", "dark"
    static Theme themeFromName(const QString &name);
    /// Sets the application palette for `theme`: the platform's own for System (as it was
    /// before the first call), else lightPalette() or darkPalette().
    static void applyTheme(Theme theme);
    static QPalette lightPalette();
    static QPalette darkPalette();
    /// True when `palette` has a dark base (text views pick their accents by it).
    static bool isDark(const QPalette &palette);

    /// The fixed-width font of editors, consoles and terminals (default: the system's).
    QFont editorFont() const;
    void setEditorFont(const QFont &font);
    bool wordWrap() const;
    void setWordWrap(bool wrap);
    /// What the New Sandbox dialog starts with (the last choice made there; on at first).
    bool newSandboxCheckpoints() const;
    bool newSandboxTrackChanges() const;
    void setNewSandboxHistory(bool checkpoints, bool trackChanges);

    /// Recent sandboxes: each a JSON object with the spec's non-secret fields
    /// (workspace_id, backend, workspace_root, seed_from), newest first.
    QStringList recentSandboxes() const;
    void addRecentSandbox(const QString &json);
    QStringList recentSeedFolders() const;
    void addRecentSeedFolder(const QString &path);
    void clearRecent();

Q_SIGNALS:
    void themeChanged(elsai::AppSettings::Theme theme);
    void editorFontChanged(const QFont &font);
    void wordWrapChanged(bool wrap);
    void recentChanged();

private:
    explicit AppSettings(QObject *parent);
    void addRecent(const char *key, const QString &value);
};

} // namespace elsai
