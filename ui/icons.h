// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QIcon>

namespace elsai {

/// The icon theme's `name` (freedesktop naming: "document-new", "edit-find", …), or the
/// workbench's own drawing of it (resources/icons/<name>.svg, compiled into the ui library)
/// where the theme has none — on a bare X server, in a container, on CI.
QIcon themeIcon(const QString &name);

/// The bundled drawing alone (tests: every name the window uses has one).
QIcon bundledIcon(const QString &name);

} // namespace elsai
