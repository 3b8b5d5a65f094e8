// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Keeps the layers of ARCHITECTURE.md honest: a file includes only headers of its own layer or
// of the layers below it, and nothing below ui/ includes a Qt Widgets header.

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QRegularExpression>
#include <QSet>
#include <QtTest>

#ifndef ELSAI_SOURCE_DIR
#error "ELSAI_SOURCE_DIR must name the source tree"
#endif
#ifndef ELSAI_QTWIDGETS_INCLUDE_DIR
#error "ELSAI_QTWIDGETS_INCLUDE_DIR must name the QtWidgets include folder"
#endif

namespace {

/// Each layer's folder and the layers it may include from (itself included).
const QList<QPair<QString, QStringList>> &layers()
{
    static const QList<QPair<QString, QStringList>> table{
        {QStringLiteral("platform"), {QStringLiteral("platform")}},
        {QStringLiteral("core"), {QStringLiteral("platform"), QStringLiteral("core")}},
        {QStringLiteral("backends"),
         {QStringLiteral("platform"), QStringLiteral("core"), QStringLiteral("backends")}},
        {QStringLiteral("mcp"),
         {QStringLiteral("platform"), QStringLiteral("core"), QStringLiteral("mcp")}},
        {QStringLiteral("model"),
         {QStringLiteral("platform"), QStringLiteral("core"), QStringLiteral("backends"),
          QStringLiteral("mcp"), QStringLiteral("model")}},
        {QStringLiteral("ui"),
         {QStringLiteral("platform"), QStringLiteral("core"), QStringLiteral("backends"),
          QStringLiteral("mcp"), QStringLiteral("model"), QStringLiteral("ui")}},
    };
    return table;
}

QStringList sourcesOf(const QString &folder)
{
    QStringList files;
    QDirIterator it(QStringLiteral(ELSAI_SOURCE_DIR "/") + folder,
                    {QStringLiteral("*.cpp"), QStringLiteral("*.h")}, QDir::Files,
                    QDirIterator::Subdirectories);
    while (it.hasNext())
        files << it.next();
    files.sort();
    return files;
}

struct Include
{
    QString name;
    bool quoted;
    int line;
};

QList<Include> includesOf(const QString &path)
{
    static const QRegularExpression include(
        QStringLiteral("^\\s*#\\s*include\\s*([<\"])([^>\"]+)[>\"]"));
    QList<Include> result;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return result;
    int line = 0;
    while (!f.atEnd()) {
        ++line;
        const QString text = QString::fromUtf8(f.readLine());
        const auto m = include.match(text);
        if (m.hasMatch())
            result.append({m.captured(2), m.captured(1) == QLatin1String("\""), line});
    }
    return result;
}

QString relative(const QString &path)
{
    return QDir(QStringLiteral(ELSAI_SOURCE_DIR)).relativeFilePath(path);
}

} // namespace

class TestLayering : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void layersIncludeOnlyBelow_data()
    {
        QTest::addColumn<QString>("layer");
        QTest::addColumn<QStringList>("allowed");
        for (const auto &[layer, allowed] : layers())
            QTest::newRow(qPrintable(layer)) << layer << allowed;
    }

    void layersIncludeOnlyBelow()
    {
        QFETCH(QString, layer);
        QFETCH(QStringList, allowed);
        // header file name → the layer that holds it (names are unique across the tree)
        QHash<QString, QString> owner;
        for (const auto &entry : layers()) {
            for (const QString &file : sourcesOf(entry.first)) {
                if (file.endsWith(QLatin1String(".h")))
                    owner.insert(QFileInfo(file).fileName(), entry.first);
            }
        }
        const QStringList files = sourcesOf(layer);
        QVERIFY2(!files.isEmpty(), qPrintable(layer));
        QStringList wrong;
        for (const QString &file : files) {
            for (const Include &inc : includesOf(file)) {
                if (!inc.quoted)
                    continue;
                const QString from = owner.value(QFileInfo(inc.name).fileName());
                if (!from.isEmpty() && !allowed.contains(from))
                    wrong << QStringLiteral("%1:%2 includes %3 (%4/)")
                                 .arg(relative(file))
                                 .arg(inc.line)
                                 .arg(inc.name, from);
            }
        }
        QVERIFY2(wrong.isEmpty(), qPrintable(wrong.join(QStringLiteral("; "))));
    }

    void eachLayerHasItsOwnBuildFile_data() { layersIncludeOnlyBelow_data(); }

    /// A library's folder holds its own CMakeLists.txt, so the folders show the libraries.
    void eachLayerHasItsOwnBuildFile()
    {
        QFETCH(QString, layer);
        QVERIFY2(QFile::exists(QStringLiteral(ELSAI_SOURCE_DIR "/%1/CMakeLists.txt").arg(layer)),
                 qPrintable(layer));
    }

    void noWidgetsBelowUi_data()
    {
        QTest::addColumn<QString>("layer");
        for (const auto &entry : layers()) {
            if (entry.first != QLatin1String("ui"))
                QTest::newRow(qPrintable(entry.first)) << entry.first;
        }
    }

    void noWidgetsBelowUi()
    {
        QFETCH(QString, layer);
        const QDir widgets(QStringLiteral(ELSAI_QTWIDGETS_INCLUDE_DIR));
        QVERIFY2(widgets.exists(QStringLiteral("QWidget")), ELSAI_QTWIDGETS_INCLUDE_DIR);
        QStringList wrong;
        for (const QString &file : sourcesOf(layer)) {
            for (const Include &inc : includesOf(file)) {
                const QString name =
                    inc.name.startsWith(QLatin1String("QtWidgets/")) ? inc.name.mid(10) : inc.name;
                if (!inc.quoted &&
                    (inc.name.startsWith(QLatin1String("QtWidgets")) || widgets.exists(name)))
                    wrong << QStringLiteral("%1:%2 includes <%3>")
                                 .arg(relative(file))
                                 .arg(inc.line)
                                 .arg(inc.name);
            }
        }
        QVERIFY2(wrong.isEmpty(), qPrintable(wrong.join(QStringLiteral("; "))));
    }
};

QTEST_GUILESS_MAIN(TestLayering)
#include "tst_layering.moc"
