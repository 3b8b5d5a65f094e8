// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "newsandboxbackendpages.h"

#include "errors.h"

#include <QCheckBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpressionValidator>
#include <QSpinBox>

namespace elsai {

namespace {

const QString kLocal = QStringLiteral("local");
const QString kBwrap = QStringLiteral("bwrap");
const QString kSsh = QStringLiteral("ssh");
const QString kDaytona = QStringLiteral("daytona");
const QString kAgentCore = QStringLiteral("agentcore");
const QString kDocker = QStringLiteral("docker");

/// A line edit whose value may come from environment variables, with a note saying which
/// one ("from DAYTONA_API_KEY") while the text is that variable's value.
struct EnvField
{
    QLineEdit *edit = nullptr;
    QLabel *note = nullptr;
    QStringList variables; ///< read in this order, as the backend does

    /// The first non-empty variable, and its value.
    std::pair<QString, QString> fromEnvironment() const
    {
        for (const QString &name : variables) {
            const QString value = qEnvironmentVariable(qPrintable(name));
            if (!value.isEmpty())
                return {name, value};
        }
        return {};
    }
    void updateNote() const
    {
        const auto [name, value] = fromEnvironment();
        const QString text = edit->text().trimmed();
        if (!name.isEmpty() && text == value)
            note->setText(NewSandboxBackendPages::tr("from %1").arg(name));
        else if (text.isEmpty())
            note->setText(NewSandboxBackendPages::tr("%1 is not set").arg(variables.first()));
        else
            note->clear();
    }
    /// `value`, or the environment's when `value` is empty.
    void set(const QString &value) const
    {
        edit->setText(value.isEmpty() ? fromEnvironment().second : value);
        updateNote();
    }
};

QLineEdit *lineEdit(QWidget *parent, const QString &name, const QString &placeholder = {})
{
    auto *edit = new QLineEdit(parent);
    edit->setObjectName(name);
    edit->setPlaceholderText(placeholder);
    return edit;
}

QLineEdit *secretEdit(QWidget *parent, const QString &name)
{
    QLineEdit *edit = lineEdit(parent, name);
    edit->setEchoMode(QLineEdit::Password);
    // No copy out of the field, no completion history: the secret stays in the field.
    edit->setContextMenuPolicy(Qt::NoContextMenu);
    return edit;
}

/// Whole numbers of bytes (qint64 does not fit a QSpinBox); 0 = unlimited.
QLineEdit *bytesEdit(QWidget *parent, const QString &name)
{
    QLineEdit *edit = lineEdit(parent, name, NewSandboxBackendPages::tr("0 = unlimited"));
    edit->setValidator(
        new QRegularExpressionValidator(QRegularExpression(QStringLiteral("\\d{1,18}")), edit));
    return edit;
}

QSpinBox *spinBox(QWidget *parent, const QString &name, int min, int max,
                  const QString &suffix = {})
{
    auto *spin = new QSpinBox(parent);
    spin->setObjectName(name);
    spin->setRange(min, max);
    spin->setSuffix(suffix);
    return spin;
}

QWidget *withNote(QWidget *parent, EnvField &field, const QString &name,
                  const QStringList &variables)
{
    auto *box = new QWidget(parent);
    auto *layout = new QHBoxLayout(box);
    layout->setContentsMargins(0, 0, 0, 0);
    field.note = new QLabel(box);
    field.note->setObjectName(name + QStringLiteral("Source"));
    field.variables = variables;
    layout->addWidget(field.edit, 1);
    layout->addWidget(field.note);
    QLineEdit *edit = field.edit;
    QLabel *note = field.note;
    QObject::connect(edit, &QLineEdit::textChanged, note, [f = field] { f.updateNote(); });
    return box;
}

QWidget *withFileBrowse(QLineEdit *edit, QWidget *parent, const QString &title)
{
    auto *box = new QWidget(parent);
    auto *layout = new QHBoxLayout(box);
    layout->setContentsMargins(0, 0, 0, 0);
    auto *browse = new QPushButton(NewSandboxBackendPages::tr("Browse…"), box);
    browse->setObjectName(edit->objectName() + QStringLiteral("Browse"));
    layout->addWidget(edit, 1);
    layout->addWidget(browse);
    QObject::connect(browse, &QPushButton::clicked, edit, [edit, title] {
        const QString file = QFileDialog::getOpenFileName(edit, title, edit->text());
        if (!file.isEmpty())
            edit->setText(file);
    });
    return box;
}

qint64 bytesValue(const QLineEdit *edit, const QString &what)
{
    bool ok = false;
    const qint64 v = edit->text().trimmed().toLongLong(&ok);
    if (!ok || v < 0)
        throw ValueError(NewSandboxBackendPages::tr("%1 needs a whole number of bytes >= 0 "
                                                    "(0 = unlimited), got '%2'")
                             .arg(what, edit->text()));
    return v;
}

/// An absolute http(s) URL, or an empty one for an empty field.
QUrl urlValue(const QLineEdit *edit, const QString &what)
{
    const QString text = edit->text().trimmed();
    if (text.isEmpty())
        return {};
    const QUrl url(text, QUrl::StrictMode);
    if (!url.isValid() || url.host().isEmpty() ||
        (url.scheme() != QLatin1String("https") && url.scheme() != QLatin1String("http")))
        throw ValueError(
            NewSandboxBackendPages::tr("%1 needs an http(s) URL, got '%2'").arg(what, text));
    return url;
}

QStringList lines(const QPlainTextEdit *edit)
{
    QStringList out;
    for (const QString &line : edit->toPlainText().split(QLatin1Char('\n'))) {
        if (!line.trimmed().isEmpty())
            out.append(line.trimmed());
    }
    return out;
}

} // namespace

struct NewSandboxBackendPages::Ui
{
    QHash<QString, QWidget *> pages;
    SandboxSpec base; ///< the last setSpec(): members no field shows

    QCheckBox *bwrapNetwork;
    QSpinBox *bwrapMaxProcesses;
    QLineEdit *bwrapMaxFileSize;
    QLineEdit *bwrapMaxMemory;
    QPlainTextEdit *bwrapReadOnlyBinds;
    QLineEdit *bwrapPath;
    QCheckBox *bwrapPidsCgroup;

    QLineEdit *sshHost;
    QSpinBox *sshPort;
    QLineEdit *sshUser;
    QLineEdit *sshIdentity;
    QLineEdit *sshKnownHosts;
    QLineEdit *sshRemoteRoot;
    QSpinBox *sshConnectTimeout;

    EnvField daytonaApiUrl;
    EnvField daytonaApiKey;
    EnvField daytonaJwtToken;
    EnvField daytonaOrganizationId;
    EnvField daytonaTarget;
    QLineEdit *daytonaSnapshot;
    QLineEdit *daytonaName;
    QSpinBox *daytonaAutoStop;
    QCheckBox *daytonaDeleteOnClose;
    QLineEdit *daytonaExisting;
    QLineEdit *daytonaRemoteRoot;

    EnvField awsRegion;
    EnvField agentcoreEndpoint;
    EnvField awsAccessKeyId;
    EnvField awsSecretAccessKey;
    EnvField awsSessionToken;
    QLineEdit *agentcoreInterpreter;
    QSpinBox *agentcoreSessionTimeout;

    QLineEdit *dockerImage;
    EnvField dockerHost;
    QCheckBox *dockerNetwork;
    QLineEdit *dockerMemory;
    QLineEdit *dockerCpus;
    QSpinBox *dockerPids;
    QCheckBox *dockerKeep;
};

NewSandboxBackendPages::NewSandboxBackendPages(QWidget *parent)
    : QStackedWidget(parent), m_ui(std::make_unique<Ui>())
{
    setObjectName(QStringLiteral("backendPages"));
    Ui &ui = *m_ui;
    auto page = [this, &ui](const QString &backend) {
        auto *w = new QWidget(this);
        w->setObjectName(QStringLiteral("page_") + backend);
        ui.pages.insert(backend, w);
        addWidget(w);
        auto *form = new QFormLayout(w);
        form->setContentsMargins(0, 0, 0, 0);
        return form;
    };
    auto note = [](QFormLayout *form, const QString &text) {
        auto *label = new QLabel(text, form->parentWidget());
        label->setWordWrap(true);
        form->addRow(label);
    };

    QFormLayout *local = page(kLocal);
    note(local, tr("Commands run on this machine as you, in the workspace folder."));

    QFormLayout *bwrap = page(kBwrap);
    QWidget *p = bwrap->parentWidget();
    note(bwrap, tr("Commands run in bubblewrap namespaces: /usr read-only, the workspace at "
                   "/workspace, a private /tmp, an allowlisted environment."));
    ui.bwrapNetwork = new QCheckBox(tr("Share the host's network (off: loopback only)"), p);
    ui.bwrapNetwork->setObjectName(QStringLiteral("bwrapNetwork"));
    bwrap->addRow(tr("Network:"), ui.bwrapNetwork);
    ui.bwrapMaxProcesses = spinBox(p, QStringLiteral("bwrapMaxProcesses"), 1, 1 << 22);
    bwrap->addRow(tr("Max processes:"), ui.bwrapMaxProcesses);
    ui.bwrapMaxFileSize = bytesEdit(p, QStringLiteral("bwrapMaxFileSizeBytes"));
    bwrap->addRow(tr("Max file size (bytes):"), ui.bwrapMaxFileSize);
    ui.bwrapMaxMemory = bytesEdit(p, QStringLiteral("bwrapMaxMemoryBytes"));
    bwrap->addRow(tr("Max memory (bytes):"), ui.bwrapMaxMemory);
    ui.bwrapReadOnlyBinds = new QPlainTextEdit(p);
    ui.bwrapReadOnlyBinds->setObjectName(QStringLiteral("bwrapReadOnlyBinds"));
    ui.bwrapReadOnlyBinds->setPlaceholderText(tr("one host path per line, e.g. /opt/tool"));
    ui.bwrapReadOnlyBinds->setMaximumHeight(60);
    bwrap->addRow(tr("Read-only binds:"), ui.bwrapReadOnlyBinds);
    ui.bwrapPath = lineEdit(p, QStringLiteral("bwrapPath"), tr("bwrap from PATH"));
    bwrap->addRow(tr("bwrap program:"), withFileBrowse(ui.bwrapPath, p, tr("bwrap program")));
    ui.bwrapPidsCgroup = new QCheckBox(tr("Bound processes with a pids cgroup when possible"), p);
    ui.bwrapPidsCgroup->setObjectName(QStringLiteral("bwrapPidsCgroup"));
    bwrap->addRow(QString(), ui.bwrapPidsCgroup);

    QFormLayout *ssh = page(kSsh);
    p = ssh->parentWidget();
    ui.sshHost = lineEdit(p, QStringLiteral("sshHost"), tr("required"));
    ssh->addRow(tr("&Host:"), ui.sshHost);
    ui.sshPort = spinBox(p, QStringLiteral("sshPort"), 1, 65535);
    ssh->addRow(tr("Port:"), ui.sshPort);
    ui.sshUser = lineEdit(p, QStringLiteral("sshUser"), tr("your user name"));
    ssh->addRow(tr("User:"), ui.sshUser);
    ui.sshIdentity = lineEdit(p, QStringLiteral("sshIdentity"), tr("ssh's own keys and agent"));
    ssh->addRow(tr("Identity file:"), withFileBrowse(ui.sshIdentity, p, tr("Private key")));
    ui.sshKnownHosts = lineEdit(p, QStringLiteral("sshKnownHosts"), tr("~/.ssh/known_hosts"));
    ssh->addRow(tr("known_hosts:"), withFileBrowse(ui.sshKnownHosts, p, tr("known_hosts file")));
    ui.sshRemoteRoot = lineEdit(p, QStringLiteral("sshRemoteRoot"));
    ssh->addRow(tr("Remote root:"), ui.sshRemoteRoot);
    ui.sshConnectTimeout = spinBox(p, QStringLiteral("sshConnectTimeout"), 1, 3600, tr(" s"));
    ssh->addRow(tr("Connect timeout:"), ui.sshConnectTimeout);

    QFormLayout *daytona = page(kDaytona);
    p = daytona->parentWidget();
    auto envRow = [](QFormLayout *form, const QString &label, EnvField &field, QLineEdit *edit,
                     const QStringList &variables) {
        field.edit = edit;
        form->addRow(label, withNote(form->parentWidget(), field, edit->objectName(), variables));
    };
    envRow(daytona, tr("API URL:"), ui.daytonaApiUrl, lineEdit(p, QStringLiteral("daytonaApiUrl")),
           {QStringLiteral("DAYTONA_API_URL"), QStringLiteral("DAYTONA_SERVER_URL")});
    envRow(daytona, tr("API key:"), ui.daytonaApiKey,
           secretEdit(p, QStringLiteral("daytonaApiKey")), {QStringLiteral("DAYTONA_API_KEY")});
    envRow(daytona, tr("JWT token:"), ui.daytonaJwtToken,
           secretEdit(p, QStringLiteral("daytonaJwtToken")), {QStringLiteral("DAYTONA_JWT_TOKEN")});
    envRow(daytona, tr("Organization id:"), ui.daytonaOrganizationId,
           lineEdit(p, QStringLiteral("daytonaOrganizationId")),
           {QStringLiteral("DAYTONA_ORGANIZATION_ID")});
    envRow(daytona, tr("Target:"), ui.daytonaTarget,
           lineEdit(p, QStringLiteral("daytonaTarget"), tr("the organization's default")),
           {QStringLiteral("DAYTONA_TARGET")});
    ui.daytonaSnapshot = lineEdit(p, QStringLiteral("daytonaSnapshot"), tr("the server's default"));
    daytona->addRow(tr("Snapshot:"), ui.daytonaSnapshot);
    ui.daytonaName = lineEdit(p, QStringLiteral("daytonaName"), tr("the server picks one"));
    daytona->addRow(tr("Sandbox name:"), ui.daytonaName);
    ui.daytonaAutoStop =
        spinBox(p, QStringLiteral("daytonaAutoStopMinutes"), 0, 1 << 20, tr(" min"));
    ui.daytonaAutoStop->setSpecialValueText(tr("never"));
    daytona->addRow(tr("Auto-stop after:"), ui.daytonaAutoStop);
    ui.daytonaDeleteOnClose = new QCheckBox(tr("Delete the sandbox on close (off: stop it)"), p);
    ui.daytonaDeleteOnClose->setObjectName(QStringLiteral("daytonaDeleteOnClose"));
    daytona->addRow(QString(), ui.daytonaDeleteOnClose);
    ui.daytonaExisting =
        lineEdit(p, QStringLiteral("daytonaExistingSandbox"), tr("none: create a new one"));
    daytona->addRow(tr("Reuse sandbox:"), ui.daytonaExisting);
    ui.daytonaRemoteRoot =
        lineEdit(p, QStringLiteral("daytonaRemoteRoot"), tr("<work dir>/workspace"));
    daytona->addRow(tr("Remote root:"), ui.daytonaRemoteRoot);

    QFormLayout *agentcore = page(kAgentCore);
    p = agentcore->parentWidget();
    envRow(agentcore, tr("Region:"), ui.awsRegion, lineEdit(p, QStringLiteral("awsRegion")),
           {QStringLiteral("AWS_REGION"), QStringLiteral("AWS_DEFAULT_REGION")});
    envRow(
        agentcore, tr("Endpoint:"), ui.agentcoreEndpoint,
        lineEdit(p, QStringLiteral("agentcoreEndpoint"), tr("the region's")),
        {QStringLiteral("AWS_ENDPOINT_URL_BEDROCK_AGENTCORE"), QStringLiteral("AWS_ENDPOINT_URL")});
    envRow(agentcore, tr("Access key id:"), ui.awsAccessKeyId,
           lineEdit(p, QStringLiteral("awsAccessKeyId")), {QStringLiteral("AWS_ACCESS_KEY_ID")});
    envRow(agentcore, tr("Secret access key:"), ui.awsSecretAccessKey,
           secretEdit(p, QStringLiteral("awsSecretAccessKey")),
           {QStringLiteral("AWS_SECRET_ACCESS_KEY")});
    envRow(agentcore, tr("Session token:"), ui.awsSessionToken,
           secretEdit(p, QStringLiteral("awsSessionToken")),
           {QStringLiteral("AWS_SESSION_TOKEN"), QStringLiteral("AWS_SECURITY_TOKEN")});
    ui.agentcoreInterpreter = lineEdit(p, QStringLiteral("agentcoreCodeInterpreterId"));
    agentcore->addRow(tr("Code interpreter:"), ui.agentcoreInterpreter);
    ui.agentcoreSessionTimeout =
        spinBox(p, QStringLiteral("agentcoreSessionTimeout"), 1, 28800, tr(" s"));
    agentcore->addRow(tr("Session idle limit:"), ui.agentcoreSessionTimeout);

    QFormLayout *docker = page(kDocker);
    p = docker->parentWidget();
    note(docker, tr("Commands run in a container of their own (Docker or Podman): no network, "
                    "all capabilities dropped, a read-only image with a private /tmp, the "
                    "workspace in a volume at /workspace."));
    ui.dockerImage = lineEdit(p, QStringLiteral("dockerImage"), tr("required, e.g. debian:12"));
    docker->addRow(tr("&Image:"), ui.dockerImage);
    envRow(docker, tr("Engine:"), ui.dockerHost,
           lineEdit(p, QStringLiteral("dockerHost"), tr("unix:///var/run/docker.sock")),
           {QStringLiteral("DOCKER_HOST")});
    ui.dockerNetwork = new QCheckBox(tr("Give the container a network (off: none at all)"), p);
    ui.dockerNetwork->setObjectName(QStringLiteral("dockerNetwork"));
    docker->addRow(tr("Network:"), ui.dockerNetwork);
    ui.dockerMemory = bytesEdit(p, QStringLiteral("dockerMemoryBytes"));
    docker->addRow(tr("Memory limit (bytes):"), ui.dockerMemory);
    ui.dockerCpus = lineEdit(p, QStringLiteral("dockerCpus"), tr("0 = no limit"));
    ui.dockerCpus->setValidator(new QRegularExpressionValidator(
        QRegularExpression(QStringLiteral("\\d{1,4}(\\.\\d{1,3})?")), ui.dockerCpus));
    docker->addRow(tr("CPUs:"), ui.dockerCpus);
    ui.dockerPids = spinBox(p, QStringLiteral("dockerPidsLimit"), 0, 1 << 22);
    ui.dockerPids->setSpecialValueText(tr("no limit"));
    docker->addRow(tr("Max processes:"), ui.dockerPids);
    ui.dockerKeep = new QCheckBox(tr("Keep the container and its volume on close (stopped)"), p);
    ui.dockerKeep->setObjectName(QStringLiteral("dockerKeep"));
    docker->addRow(QString(), ui.dockerKeep);

    for (QLineEdit *edit : findChildren<QLineEdit *>())
        connect(edit, &QLineEdit::textChanged, this, &NewSandboxBackendPages::edited);
}

NewSandboxBackendPages::~NewSandboxBackendPages() = default;

void NewSandboxBackendPages::showBackend(const QString &backend)
{
    if (QWidget *w = m_ui->pages.value(backend))
        setCurrentWidget(w);
    // Only the shown page sizes the stack: the local page is not as tall as Daytona's.
    for (QWidget *page : std::as_const(m_ui->pages)) {
        const auto policy = page == currentWidget() ? QSizePolicy::Preferred : QSizePolicy::Ignored;
        page->setSizePolicy(policy, policy);
    }
    adjustSize();
    Q_EMIT edited();
}

QString NewSandboxBackendPages::currentBackend() const
{
    return m_ui->pages.key(currentWidget());
}

void NewSandboxBackendPages::setSpec(const SandboxSpec &spec)
{
    Ui &ui = *m_ui;
    ui.base = spec;
    const BwrapSandboxBackend::Options &b = spec.bwrap;
    ui.bwrapNetwork->setChecked(b.network);
    ui.bwrapMaxProcesses->setValue(b.maxProcesses);
    ui.bwrapMaxFileSize->setText(QString::number(b.maxFileSizeBytes));
    ui.bwrapMaxMemory->setText(QString::number(b.maxMemoryBytes));
    ui.bwrapReadOnlyBinds->setPlainText(b.readOnlyBinds.join(QLatin1Char('\n')));
    ui.bwrapPath->setText(b.bwrapPath);
    ui.bwrapPidsCgroup->setChecked(b.pidsCgroup);

    ui.sshHost->setText(spec.ssh.host);
    ui.sshPort->setValue(spec.ssh.port);
    ui.sshUser->setText(spec.ssh.user);
    ui.sshIdentity->setText(spec.ssh.identityFile);
    ui.sshKnownHosts->setText(spec.ssh.knownHostsFile);
    ui.sshRemoteRoot->setText(spec.sshRemoteRoot);
    ui.sshConnectTimeout->setValue(spec.ssh.connectTimeoutSeconds);

    const DaytonaSandboxBackend::Options &d = spec.daytona;
    // An empty value is filled from the environment, as DaytonaConfig::fromEnvironment() does.
    ui.daytonaApiUrl.set(d.config.apiUrl.toString());
    ui.daytonaApiKey.set(d.config.apiKey);
    ui.daytonaJwtToken.set(d.config.jwtToken);
    ui.daytonaOrganizationId.set(d.config.organizationId);
    ui.daytonaTarget.set(d.config.target);
    ui.daytonaSnapshot->setText(d.snapshot);
    ui.daytonaName->setText(d.name);
    ui.daytonaAutoStop->setValue(d.autoStopMinutes);
    ui.daytonaDeleteOnClose->setChecked(d.deleteOnClose);
    ui.daytonaExisting->setText(d.existingSandbox);
    ui.daytonaRemoteRoot->setText(d.remoteRoot);

    // SandboxSpec::createAgentCoreBackend() reads the environment for empty values: show them.
    const aws::AgentCoreOptions &a = spec.agentcore;
    ui.awsRegion.set(a.region);
    ui.agentcoreEndpoint.set(a.endpoint.toString());
    ui.awsAccessKeyId.set(a.credentials.accessKeyId);
    ui.awsSecretAccessKey.set(a.credentials.secretAccessKey);
    ui.awsSessionToken.set(a.credentials.sessionToken);
    ui.agentcoreInterpreter->setText(a.codeInterpreterId);
    ui.agentcoreSessionTimeout->setValue(a.sessionTimeoutSeconds);

    const DockerSandboxBackend::Options &o = spec.docker;
    ui.dockerImage->setText(o.image);
    ui.dockerHost.set(o.host);
    ui.dockerNetwork->setChecked(o.network);
    ui.dockerMemory->setText(QString::number(o.memoryBytes));
    ui.dockerCpus->setText(QString::number(o.cpus));
    ui.dockerPids->setValue(o.pidsLimit);
    ui.dockerKeep->setChecked(o.keep);
    Q_EMIT edited();
}

void NewSandboxBackendPages::apply(SandboxSpec &spec) const
{
    const Ui &ui = *m_ui;
    spec.bwrap = ui.base.bwrap;
    spec.ssh = ui.base.ssh;
    spec.sshRemoteRoot = ui.base.sshRemoteRoot;
    spec.daytona = ui.base.daytona;
    spec.agentcore = ui.base.agentcore;
    spec.docker = ui.base.docker;
    const QString backend = currentBackend();
    if (const QString missing = missingField(); !missing.isEmpty())
        throw ValueError(missing);
    if (backend == kBwrap) {
        BwrapSandboxBackend::Options &b = spec.bwrap;
        b.network = ui.bwrapNetwork->isChecked();
        b.maxProcesses = ui.bwrapMaxProcesses->value();
        b.maxFileSizeBytes = bytesValue(ui.bwrapMaxFileSize, tr("bwrap max file size"));
        b.maxMemoryBytes = bytesValue(ui.bwrapMaxMemory, tr("bwrap max memory"));
        b.readOnlyBinds = lines(ui.bwrapReadOnlyBinds);
        for (const QString &path : b.readOnlyBinds) {
            if (!path.startsWith(QLatin1Char('/')))
                throw ValueError(tr("read-only bind '%1' is not an absolute path").arg(path));
        }
        b.bwrapPath = ui.bwrapPath->text().trimmed();
        b.pidsCgroup = ui.bwrapPidsCgroup->isChecked();
    } else if (backend == kSsh) {
        spec.ssh.host = ui.sshHost->text().trimmed();
        spec.ssh.port = ui.sshPort->value();
        spec.ssh.user = ui.sshUser->text().trimmed();
        spec.ssh.identityFile = ui.sshIdentity->text().trimmed();
        spec.ssh.knownHostsFile = ui.sshKnownHosts->text().trimmed();
        spec.ssh.connectTimeoutSeconds = ui.sshConnectTimeout->value();
        spec.sshRemoteRoot = ui.sshRemoteRoot->text().trimmed();
    } else if (backend == kDaytona) {
        DaytonaSandboxBackend::Options &d = spec.daytona;
        d.config.apiUrl = urlValue(ui.daytonaApiUrl.edit, tr("the Daytona API URL"));
        if (d.config.apiUrl.isEmpty())
            d.config.apiUrl = daytona::DaytonaConfig().apiUrl;
        d.config.apiKey = ui.daytonaApiKey.edit->text().trimmed();
        d.config.jwtToken = ui.daytonaJwtToken.edit->text().trimmed();
        d.config.organizationId = ui.daytonaOrganizationId.edit->text().trimmed();
        d.config.target = ui.daytonaTarget.edit->text().trimmed();
        d.snapshot = ui.daytonaSnapshot->text().trimmed();
        d.name = ui.daytonaName->text().trimmed();
        d.autoStopMinutes = ui.daytonaAutoStop->value();
        d.deleteOnClose = ui.daytonaDeleteOnClose->isChecked();
        d.existingSandbox = ui.daytonaExisting->text().trimmed();
        d.remoteRoot = ui.daytonaRemoteRoot->text().trimmed();
        if (!d.remoteRoot.isEmpty() && !d.remoteRoot.startsWith(QLatin1Char('/')))
            throw ValueError(
                tr("the Daytona remote root must be absolute, got '%1'").arg(d.remoteRoot));
    } else if (backend == kAgentCore) {
        aws::AgentCoreOptions &a = spec.agentcore;
        a.region = ui.awsRegion.edit->text().trimmed();
        a.endpoint = urlValue(ui.agentcoreEndpoint.edit, tr("the AgentCore endpoint"));
        a.credentials.accessKeyId = ui.awsAccessKeyId.edit->text().trimmed();
        a.credentials.secretAccessKey = ui.awsSecretAccessKey.edit->text().trimmed();
        a.credentials.sessionToken = ui.awsSessionToken.edit->text().trimmed();
        a.codeInterpreterId = ui.agentcoreInterpreter->text().trimmed();
        a.sessionTimeoutSeconds = ui.agentcoreSessionTimeout->value();
    } else if (backend == kDocker) {
        DockerSandboxBackend::Options &o = spec.docker;
        o.image = ui.dockerImage->text().trimmed();
        o.host = ui.dockerHost.edit->text().trimmed();
        o.network = ui.dockerNetwork->isChecked();
        o.memoryBytes = bytesValue(ui.dockerMemory, tr("the container's memory limit"));
        o.cpus = ui.dockerCpus->text().trimmed().toDouble();
        o.pidsLimit = ui.dockerPids->value();
        o.keep = ui.dockerKeep->isChecked();
    }
}

QString NewSandboxBackendPages::missingField() const
{
    const Ui &ui = *m_ui;
    const QString backend = currentBackend();
    auto empty = [](const QLineEdit *e) { return e->text().trimmed().isEmpty(); };
    if (backend == kSsh && empty(ui.sshHost))
        return tr("ssh needs a host: fill in Host.");
    if (backend == kDaytona && empty(ui.daytonaApiKey.edit) && empty(ui.daytonaJwtToken.edit))
        return tr("Daytona needs an API key (or a JWT token): fill it in or set "
                  "DAYTONA_API_KEY.");
    if (backend == kAgentCore) {
        if (empty(ui.awsRegion.edit))
            return tr("AgentCore needs a region: fill it in or set AWS_REGION.");
        if (empty(ui.awsAccessKeyId.edit) || empty(ui.awsSecretAccessKey.edit))
            return tr("AgentCore needs an access key id and a secret access key: fill them in "
                      "or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.");
    }
    if (backend == kDocker && empty(ui.dockerImage))
        return tr("docker needs an image: fill in Image.");
    return {};
}

} // namespace elsai
