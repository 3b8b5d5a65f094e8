// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QDialog>

class QCheckBox;
class QComboBox;
class QFontComboBox;
class QLabel;
class QSpinBox;

namespace elsai {

/// File → Settings: the theme (follow the system, light, dark), the editor font and size
/// (also the console's and a terminal's: AppSettings::editorFont) and word wrap. OK and Apply
/// store them (AppSettings) and open widgets follow at once; Cancel changes nothing;
/// Restore Defaults fills in the defaults (the system's fixed font, follow the system).
class SettingsDialog : public QDialog
{
    Q_OBJECT

public:
    explicit SettingsDialog(QWidget *parent = nullptr);

    QComboBox *themeBox() const { return m_theme; }
    QFontComboBox *fontBox() const { return m_font; }
    QSpinBox *sizeBox() const { return m_size; }
    QCheckBox *wordWrapBox() const { return m_wrap; }
    /// The font the fields describe.
    QFont chosenFont() const;
    /// Stores the fields in AppSettings (what OK and Apply do).
    void apply();

private:
    void load();
    void restoreDefaults();
    void updatePreview();

    QComboBox *m_theme;
    QFontComboBox *m_font;
    QSpinBox *m_size;
    QCheckBox *m_wrap;
    QLabel *m_preview;
};

} // namespace elsai
