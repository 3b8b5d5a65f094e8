// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "settingsdialog.h"

#include "appsettings.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFontComboBox>
#include <QFontDatabase>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace elsai {

SettingsDialog::SettingsDialog(QWidget *parent) : QDialog(parent)
{
    setObjectName(QStringLiteral("settingsDialog"));
    setWindowTitle(tr("Settings"));
    setAccessibleName(tr("Settings"));

    m_theme = new QComboBox(this);
    m_theme->setObjectName(QStringLiteral("themeBox"));
    m_theme->addItem(tr("Follow the system"), int(AppSettings::Theme::System));
    m_theme->addItem(tr("Light"), int(AppSettings::Theme::Light));
    m_theme->addItem(tr("Dark"), int(AppSettings::Theme::Dark));
    m_theme->setAccessibleName(tr("Theme"));
    m_font = new QFontComboBox(this);
    m_font->setObjectName(QStringLiteral("fontBox"));
    m_font->setFontFilters(QFontComboBox::MonospacedFonts);
    m_font->setAccessibleName(tr("Editor font"));
    if (m_font->lineEdit())
        m_font->lineEdit()->setAccessibleName(tr("Editor font"));
    m_size = new QSpinBox(this);
    m_size->setObjectName(QStringLiteral("fontSizeBox"));
    m_size->setRange(6, 48);
    m_size->setSuffix(tr(" pt"));
    m_size->setAccessibleName(tr("Font size"));
    m_wrap = new QCheckBox(tr("&Wrap long lines in editors"), this);
    m_wrap->setObjectName(QStringLiteral("wordWrapBox"));
    m_preview = new QLabel(QStringLiteral("def percent(part, whole):  # 0O1lI {}[]"), this);
    m_preview->setObjectName(QStringLiteral("fontPreview"));
    m_preview->setAccessibleName(tr("Font preview"));
    m_preview->setFrameShape(QFrame::StyledPanel);
    m_preview->setContentsMargins(6, 6, 6, 6);

    auto *form = new QFormLayout;
    form->addRow(tr("&Theme:"), m_theme);
    form->addRow(tr("Editor &font:"), m_font);
    form->addRow(tr("Font si&ze:"), m_size);
    form->addRow(QString(), m_wrap);
    form->addRow(tr("Preview:"), m_preview);
    auto *note = new QLabel(
        tr("The font is used by the file tabs and other text views. OK and Apply change the "
           "open ones at once."),
        this);
    note->setWordWrap(true);

    auto *buttons =
        new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel |
                                 QDialogButtonBox::Apply | QDialogButtonBox::RestoreDefaults,
                             this);
    buttons->setObjectName(QStringLiteral("settingsButtons"));
    connect(buttons, &QDialogButtonBox::accepted, this, [this] {
        apply();
        accept();
    });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(buttons->button(QDialogButtonBox::Apply), &QPushButton::clicked, this,
            &SettingsDialog::apply);
    connect(buttons->button(QDialogButtonBox::RestoreDefaults), &QPushButton::clicked, this,
            &SettingsDialog::restoreDefaults);
    connect(m_font, &QFontComboBox::currentFontChanged, this, &SettingsDialog::updatePreview);
    connect(m_size, &QSpinBox::valueChanged, this, &SettingsDialog::updatePreview);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(note);
    layout->addWidget(buttons);
    load();
}

void SettingsDialog::load()
{
    const AppSettings *settings = AppSettings::instance();
    m_theme->setCurrentIndex(m_theme->findData(int(settings->theme())));
    const QFont font = settings->editorFont();
    m_font->setCurrentFont(font);
    m_size->setValue(qMax(6, font.pointSize()));
    m_wrap->setChecked(settings->wordWrap());
    updatePreview();
}

void SettingsDialog::restoreDefaults()
{
    m_theme->setCurrentIndex(m_theme->findData(int(AppSettings::Theme::System)));
    const QFont font = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    m_font->setCurrentFont(font);
    m_size->setValue(qMax(6, font.pointSize()));
    m_wrap->setChecked(false);
}

QFont SettingsDialog::chosenFont() const
{
    QFont font = m_font->currentFont();
    font.setPointSize(m_size->value());
    font.setStyleHint(QFont::Monospace);
    return font;
}

void SettingsDialog::updatePreview()
{
    m_preview->setFont(chosenFont());
}

void SettingsDialog::apply()
{
    AppSettings *settings = AppSettings::instance();
    const auto theme = AppSettings::Theme(m_theme->currentData().toInt());
    if (theme != settings->theme())
        settings->setTheme(theme);
    if (chosenFont() != settings->editorFont())
        settings->setEditorFont(chosenFont());
    settings->setWordWrap(m_wrap->isChecked());
}

} // namespace elsai
