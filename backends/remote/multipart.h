// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QByteArray>
#include <QList>
#include <QPair>

#include <optional>

namespace elsai::remote {

/// Builds a multipart/form-data body part by part, in the order added (Daytona's bulk upload
/// needs each `.path` field before its `.file`, which QHttpMultiPart + a body-less send cannot
/// give us).
class MultipartWriter
{
public:
    MultipartWriter();
    void addField(const QByteArray &name, const QByteArray &value);
    void addFile(const QByteArray &name, const QByteArray &fileName, const QByteArray &content,
                 const QByteArray &contentType = "application/octet-stream");
    /// The complete body (with the closing boundary). Picks a new boundary if a part holds the
    /// current one.
    QByteArray finish();
    QByteArray contentType() const;

private:
    struct Part
    {
        QByteArray headers;
        QByteArray content;
    };
    QList<Part> m_parts;
    QByteArray m_boundary;
};

struct MultipartPart
{
    QList<QPair<QByteArray, QByteArray>> headers;
    QByteArray name;     ///< Content-Disposition name
    QByteArray fileName; ///< Content-Disposition filename (empty for a field)
    QByteArray content;
};

/// The boundary parameter of a multipart Content-Type, empty when none.
QByteArray multipartBoundary(const QByteArray &contentType);
/// Splits a multipart body; nullopt when it is malformed or the closing boundary is missing
/// (a truncated answer).
std::optional<QList<MultipartPart>> parseMultipart(const QByteArray &body,
                                                   const QByteArray &boundary);

} // namespace elsai::remote
