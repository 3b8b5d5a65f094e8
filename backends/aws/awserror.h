// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "errors.h"

#include <QByteArray>
#include <QString>

namespace elsai::remote {
struct HttpResponse;
}

namespace elsai::aws {

/// The error code and message of a failed AWS response: the x-amzn-ErrorType header or the JSON
/// body's code/__type (REST-JSON services), or the <Code>/<Message> of an S3 XML error body.
struct AwsErrorInfo
{
    QString code;
    QString message;
    QString requestId;
};
AwsErrorInfo parseAwsError(const remote::HttpResponse &response);

/// Throws the typed error of a failed response: 401/403 → PermissionError, 404 →
/// FileNotFoundError, 408 → TimeoutError, 400 → ValueError, a network failure or anything else
/// → OSError. `what` names the operation ("AgentCore readFiles", "S3 PUT s3://b/k").
[[noreturn]] void throwForResponse(const remote::HttpResponse &response, const QString &what);

} // namespace elsai::aws
