// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "appsettings.h"

#include <QApplication>
#include <QFontDatabase>
#include <QPointer>
#include <QStyle>

#include <optional>

namespace elsai {

namespace {

/// The palette the platform gave the application, taken before the first theme is applied.
std::optional<QPalette> &systemPalette()
{
    static std::optional<QPalette> palette;
    return palette;
}

void rememberSystemPalette()
{
    if (!systemPalette())
        systemPalette() = QApplication::palette();
}

} // namespace

AppSettings::AppSettings(QObject *parent) : QObject(parent)
{
    setObjectName(QStringLiteral("appSettings"));
    rememberSystemPalette();
}

AppSettings *AppSettings::instance()
{
    static QPointer<AppSettings> self;
    if (!self)
        self = new AppSettings(QCoreApplication::instance());
    return self;
}

QSettings AppSettings::store()
{
    return QSettings(QStringLiteral("elsai"), QStringLiteral("workbench"));
}

QString AppSettings::themeName(Theme theme)
{
    switch (theme) {
    case Theme::Light:
        return QStringLiteral("light");
    case Theme::Dark:
        return QStringLiteral("dark");
    case Theme::System:
        break;
    }
    return QStringLiteral("system");
}

AppSettings::Theme AppSettings::themeFromName(const QString &name)
{
    if (name == QLatin1String("light"))
        return Theme::Light;
    if (name == QLatin1String("dark"))
        return Theme::Dark;
    return Theme::System;
}

AppSettings::Theme AppSettings::theme() const
{
    return themeFromName(store().value(QLatin1String(SettingsKey::Theme)).toString());
}

void AppSettings::setTheme(Theme theme)
{
    store().setValue(QLatin1String(SettingsKey::Theme), themeName(theme));
    applyTheme(theme);
    Q_EMIT themeChanged(theme);
}

void AppSettings::applyTheme(Theme theme)
{
    rememberSystemPalette();
    switch (theme) {
    case Theme::System:
        QApplication::setPalette(*systemPalette());
        break;
    case Theme::Light:
        QApplication::setPalette(lightPalette());
        break;
    case Theme::Dark:
        QApplication::setPalette(darkPalette());
        break;
    }
}

QPalette AppSettings::lightPalette()
{
    return QApplication::style()->standardPalette();
}

QPalette AppSettings::darkPalette()
{
    QPalette p;
    const QColor window(0x2b, 0x2b, 0x2b), base(0x1e, 0x1e, 0x1e), text(0xe6, 0xe6, 0xe6);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(0x26, 0x26, 0x26));
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, QColor(0x35, 0x35, 0x35));
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, QColor(0xff, 0x6b, 0x6b));
    p.setColor(QPalette::ToolTipBase, base);
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, QColor(0x8a, 0x8a, 0x8a));
    p.setColor(QPalette::Highlight, QColor(0x2f, 0x65, 0xca));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, QColor(0x6c, 0xb4, 0xff));
    p.setColor(QPalette::LinkVisited, QColor(0xb4, 0x8c, 0xff));
    p.setColor(QPalette::Light, QColor(0x40, 0x40, 0x40));
    p.setColor(QPalette::Midlight, QColor(0x38, 0x38, 0x38));
    p.setColor(QPalette::Mid, QColor(0x30, 0x30, 0x30));
    p.setColor(QPalette::Dark, QColor(0x18, 0x18, 0x18));
    p.setColor(QPalette::Shadow, Qt::black);
    for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, role, QColor(0x7a, 0x7a, 0x7a));
    return p;
}

bool AppSettings::isDark(const QPalette &palette)
{
    return palette.color(QPalette::Base).lightness() < 128;
}

QFont AppSettings::editorFont() const
{
    QFont font = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    const QString saved = store().value(QLatin1String(SettingsKey::EditorFont)).toString();
    if (!saved.isEmpty())
        font.fromString(saved);
    return font;
}

void AppSettings::setEditorFont(const QFont &font)
{
    store().setValue(QLatin1String(SettingsKey::EditorFont), font.toString());
    Q_EMIT editorFontChanged(font);
}

bool AppSettings::wordWrap() const
{
    return store().value(QLatin1String(SettingsKey::EditorWordWrap), false).toBool();
}

void AppSettings::setWordWrap(bool wrap)
{
    if (wrap == wordWrap())
        return;
    store().setValue(QLatin1String(SettingsKey::EditorWordWrap), wrap);
    Q_EMIT wordWrapChanged(wrap);
}

bool AppSettings::newSandboxCheckpoints() const
{
    return store().value(QLatin1String(SettingsKey::NewSandboxCheckpoints), true).toBool();
}

bool AppSettings::newSandboxTrackChanges() const
{
    return store().value(QLatin1String(SettingsKey::NewSandboxTrackChanges), true).toBool();
}

void AppSettings::setNewSandboxHistory(bool checkpoints, bool trackChanges)
{
    QSettings s = store();
    s.setValue(QLatin1String(SettingsKey::NewSandboxCheckpoints), checkpoints);
    s.setValue(QLatin1String(SettingsKey::NewSandboxTrackChanges), trackChanges);
}

QStringList AppSettings::recentSandboxes() const
{
    return store().value(QLatin1String(SettingsKey::RecentSandboxes)).toStringList();
}

void AppSettings::addRecentSandbox(const QString &json)
{
    addRecent(SettingsKey::RecentSandboxes, json);
}

QStringList AppSettings::recentSeedFolders() const
{
    return store().value(QLatin1String(SettingsKey::RecentSeedFolders)).toStringList();
}

void AppSettings::addRecentSeedFolder(const QString &path)
{
    addRecent(SettingsKey::RecentSeedFolders, path);
}

void AppSettings::clearRecent()
{
    QSettings s = store();
    s.remove(QLatin1String(SettingsKey::RecentSandboxes));
    s.remove(QLatin1String(SettingsKey::RecentSeedFolders));
    Q_EMIT recentChanged();
}

void AppSettings::addRecent(const char *key, const QString &value)
{
    if (value.isEmpty())
        return;
    QSettings s = store();
    QStringList list = s.value(QLatin1String(key)).toStringList();
    list.removeAll(value);
    list.prepend(value);
    while (list.size() > recentLimit)
        list.removeLast();
    s.setValue(QLatin1String(key), list);
    Q_EMIT recentChanged();
}

} // namespace elsai
