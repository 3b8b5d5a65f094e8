// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "multipart.h"

#include <QRandomGenerator>

namespace elsai::remote {

static QByteArray newBoundary()
{
    return "elsai-" + QByteArray::number(QRandomGenerator::global()->generate64(), 16) +
           QByteArray::number(QRandomGenerator::global()->generate64(), 16);
}

static QByteArray quoted(const QByteArray &s)
{
    QByteArray out = s;
    out.replace('\\', "\\\\").replace('"', "\\\"").replace('\r', ' ').replace('\n', ' ');
    return '"' + out + '"';
}

MultipartWriter::MultipartWriter() : m_boundary(newBoundary()) {}

void MultipartWriter::addField(const QByteArray &name, const QByteArray &value)
{
    m_parts.append({"Content-Disposition: form-data; name=" + quoted(name) + "\r\n", value});
}

void MultipartWriter::addFile(const QByteArray &name, const QByteArray &fileName,
                              const QByteArray &content, const QByteArray &contentType)
{
    m_parts.append({"Content-Disposition: form-data; name=" + quoted(name) + "; filename=" +
                        quoted(fileName) + "\r\nContent-Type: " + contentType + "\r\n",
                    content});
}

QByteArray MultipartWriter::finish()
{
    const auto clash = [this] {
        for (const Part &p : m_parts) {
            if (p.content.contains(m_boundary))
                return true;
        }
        return false;
    };
    while (clash())
        m_boundary = newBoundary();
    QByteArray out;
    for (const Part &p : m_parts)
        out += "--" + m_boundary + "\r\n" + p.headers + "\r\n" + p.content + "\r\n";
    out += "--" + m_boundary + "--\r\n";
    return out;
}

QByteArray MultipartWriter::contentType() const
{
    return "multipart/form-data; boundary=" + m_boundary;
}

QByteArray multipartBoundary(const QByteArray &contentType)
{
    for (QByteArray param : contentType.split(';')) {
        param = param.trimmed();
        if (param.toLower().startsWith("boundary=")) {
            QByteArray b = param.mid(9).trimmed();
            if (b.size() >= 2 && b.startsWith('"') && b.endsWith('"'))
                b = b.mid(1, b.size() - 2);
            return b;
        }
    }
    return {};
}

static QByteArray dispositionParam(const QByteArray &disposition, const QByteArray &key)
{
    const QByteArray needle = key + "=\"";
    qsizetype at = 0;
    // "name" must not match inside "filename".
    while ((at = disposition.indexOf(needle, at)) >= 0) {
        if (at == 0 || disposition.at(at - 1) == ' ' || disposition.at(at - 1) == ';')
            break;
        at += needle.size();
    }
    if (at < 0)
        return {};
    QByteArray out;
    for (qsizetype i = at + needle.size(); i < disposition.size(); ++i) {
        const char c = disposition.at(i);
        if (c == '\\' && i + 1 < disposition.size())
            out += disposition.at(++i);
        else if (c == '"')
            return out;
        else
            out += c;
    }
    return {};
}

std::optional<QList<MultipartPart>> parseMultipart(const QByteArray &body,
                                                   const QByteArray &boundary)
{
    if (boundary.isEmpty())
        return std::nullopt;
    const QByteArray delimiter = "--" + boundary;
    qsizetype pos = body.indexOf(delimiter);
    if (pos < 0)
        return std::nullopt;
    QList<MultipartPart> parts;
    for (;;) {
        pos += delimiter.size();
        if (body.mid(pos, 2) == "--")
            return parts; // closing boundary
        if (body.mid(pos, 2) != "\r\n")
            return std::nullopt;
        pos += 2;
        const qsizetype headerEnd = body.indexOf("\r\n\r\n", pos);
        if (headerEnd < 0)
            return std::nullopt;
        MultipartPart part;
        for (const QByteArray &line : body.mid(pos, headerEnd - pos).split('\n')) {
            const qsizetype colon = line.indexOf(':');
            if (colon <= 0)
                continue;
            const QByteArray name = line.left(colon).trimmed();
            const QByteArray value = line.mid(colon + 1).trimmed();
            part.headers.append({name, value});
            if (name.compare("Content-Disposition", Qt::CaseInsensitive) == 0) {
                part.name = dispositionParam(value, "name");
                part.fileName = dispositionParam(value, "filename");
            }
        }
        const qsizetype contentStart = headerEnd + 4;
        const qsizetype next = body.indexOf("\r\n" + delimiter, contentStart);
        if (next < 0)
            return std::nullopt; // truncated
        part.content = body.mid(contentStart, next - contentStart);
        parts.append(part);
        pos = next + 2;
    }
}

} // namespace elsai::remote
