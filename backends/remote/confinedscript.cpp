// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "confinedscript.h"

#include "atomicwrite.h"
#include "errnoerror.h"
#include "errors.h"
#include "findrecord.h"
#include "shellquote.h"

#include <algorithm>
#include <cerrno>

namespace elsai::remote {

namespace {

// POSIX sh (dash, bash, ksh). `moved` says the shell changed folder since the last kernel
// check; `check` runs before every effect and before the last component is used. walk: $2 =
// parent stops before the last component (left in $name), $3 = 1 creates missing folders.
// follow: a read's final symlinks, resolved by the same walk. A link as the last component
// is followed (read) by walking its target the same way, never by name. emit: the payload,
// raw or in base64 (never call die inside it: it runs in a pipeline).
const char kScript[] = R"SH(E=$1 R=$2 op=$3 p=$4; shift 4
unset CDPATH
exec 9>&2 2>/dev/null
pwdx=/bin/pwd; [ -x /bin/pwd ] || pwdx='env pwd' # (NixOS has no /bin/pwd)
die() {
  if [ "$E" = text ]; then printf '\n\001elsai:%s:%s\n' "$1" "$2"
  else printf '\001elsai:%s:%s\n' "$1" "$2" >&9; fi
  exit 253
}
emit() {
  [ "$E" = text ] || { "$@"; return; }
  exec 4>&1
  es=$( { { "$@"; echo $? >&5; } | base64 -w0 >&4; } 5>&1 )
  return "$es"
}
where() { w=$($pwdx -P && echo .) || return 1; w=${w%.}; w=${w%?}; }
cd -P -- "$R" || die ENOENT "the workspace folder is gone; restart the sandbox"
where || die EIO "cannot resolve the workspace folder"
R=$w moved=
check() {
  if [ -n "$moved" ]; then
    where && case $w in "$R"|"$R"/*) moved=; return 0;; esac
    die EACCES "'$p' resolves outside the workspace (symbolic link)"
  fi
}
stuck() {
  check
  if [ -L "./$1" ] && [ ! -e "./$1" ]; then
    case $(readlink -- "./$1") in /*|..|../*|*/..|*/../*)
      die EACCES "'$p' resolves outside the workspace (symbolic link)";; esac
    readlink -f -- "./$1" >/dev/null ||
      die ELOOP "'$p': too many symbolic links, or a link that cannot be followed safely"
    die ENOENT "'$p': the symlink '$1' points to nothing"
  fi
  [ -e "./$1" ] || die ENOENT "'$p': no such file or folder"
  [ -d "./$1" ] || { [ -z "$rest" ] && [ -n "$mk" ] && die EEXIST "'$p' exists and is not a folder"
    die ENOTDIR "'$p': '$1' is not a folder"; }
  die EACCES "'$p': cannot enter the folder '$1'"
}
walk() {
  rest=$1 name= mk=$3
  while [ -n "$rest" ]; do
    c=${rest%%/*}
    case $rest in */*) rest=${rest#*/};; *) rest=;; esac
    case $c in ''|.) continue;; esac
    if [ -z "$rest" ] && [ "$2" = parent ] && [ "$c" != .. ]; then name=$c; return 0; fi
    if [ -n "$mk" ] && [ "$c" != .. ] && [ ! -e "./$c" ] && [ ! -L "./$c" ]; then
      check
      mkdir -- "./$c" || [ -d "./$c" ] || die EIO "cannot create the folder '$c' of '$p'"
    fi
    cd -P -- "./$c" || stuck "$c"
    moved=1
  done
}
follow() {
  hops=0
  while check; [ -n "$name" ] && [ -L "./$name" ]; do
    hops=$((hops + 1))
    [ "$hops" -le 40 ] ||
      die ELOOP "'$p': too many symbolic links, or a link that cannot be followed safely"
    t=$(readlink -- "./$name") || die EIO "cannot read the symlink '$name' of '$p'"
    case $t in /*) cd -P / || die EIO "cannot resolve '$p'"; moved=1;; esac
    walk "$t" parent
  done
}
entry() { find "${1:-.}" -maxdepth 0 -printf '%y\t%s\t%T@\t%D:%i\t%f\0'; }
writable() {
  [ -n "$name" ] || die EISDIR "cannot write '$p': it is a folder"
  [ -L "./$name" ] && die EACCES "refusing to write '$p': it is a symlink"
  [ -d "./$name" ] && die EISDIR "cannot write '$p': it is a folder"
  m=644
  if [ -f "./$name" ]; then
    m=$(stat -c %a -- "./$name"); case $m in ''|*[!0-7]*) m=644;; esac
  fi
}
tmpname() {
  case $1 in */*|'') die EINVAL "'$1' is not a temporary name";; .?*.elsai-tmp-?*) ;;
    *) die EINVAL "'$1' is not a temporary name";; esac
  t=./$1
}
case $op in
read|range)
  walk "$p" parent; follow
  [ -n "$name" ] && [ ! -d "./$name" ] || die EISDIR "cannot read '$p': it is a folder"
  [ -e "./$name" ] || die ENOENT "cannot read '$p': no such file"
  [ -f "./$name" ] || die EINVAL "cannot read '$p': not a regular file (FIFO, socket or device)"
  f=iflag=nofollow,nonblock n=
  if [ "$op" = range ]; then
    case $1:$2 in *[!0-9:]*|:*|*:) die EINVAL "a file range needs two byte counts";; esac
    n=$(stat -c %s -- "./$name") || die EIO "cannot read '$p'"
    f="$f,skip_bytes,count_bytes skip=$1 count=$2"
  fi
  body() { [ -z "$n" ] || echo "$n"; dd if="./$name" $f bs=128K status=none; }
  emit body && exit 0
  [ -L "./$name" ] && die EACCES "'$p' was replaced by a symlink while being read; try again"
  die EIO "cannot read '$p'";;
list)
  walk "$p" all; check
  [ -n "$1" ] || { emit find . -mindepth 1 -maxdepth 1 -printf '%y\t%s\t%T@\t%D:%i\t%f\0'
                   exit 0; }
  cap=$1; case $cap in *[!0-9]*) die EINVAL "a listing cap is a count";; esac
  capped() {
)SH" ELSAI_CAPPED_LISTING_SH R"SH(  }
  emit capped;;
tree)
  walk "$p" all; check
  emit find . -mindepth 1 -printf '%y\t%s\t%T@\t%D:%i\t%P\0';;
stat)
  walk "$p" parent; check
  [ -n "$name" ] || { emit entry; exit 0; }
  [ -e "./$name" ] || [ -L "./$name" ] || die ENOENT "'$p': no such file or folder"
  emit entry "./$name";;
remove)
  walk "$p" parent; check
  [ -n "$name" ] || die EACCES "refusing to remove the workspace root"
  [ -e "./$name" ] || [ -L "./$name" ] || die ENOENT "cannot remove '$p': no such file or folder"
  if [ -d "./$name" ] && [ ! -L "./$name" ] && [ "$1" != 1 ]; then
    die EISDIR "cannot remove '$p': it is a folder (remove it recursively)"
  fi
  rm -rf -- "./$name" || die EIO "cannot remove '$p' completely";;
mkdirs)
  walk "$p" all 1; check;;
cwd)
  walk "$p" all; check; where || die EIO "cannot resolve '$p'"
  emit printf '%s' "$w";;
write)
  # Created with O_EXCL under a name only this call uses, then held open: chmod and sync act
  # on that file through /dev/fd even if the name is swapped meanwhile.
  walk "$p" parent 1; check; writable; tmpname "$1"; set -C
  command exec 3>"$t" || die EIO "cannot create a temporary file beside '$p'"
  if [ $# -ge 2 ]; then fill() { printf '%s' "$2" | base64 -d; }; else fill() { cat; }; fi
  if [ -f /dev/fd/3 ] && fill "$@" >&3 && chmod "$m" /dev/fd/3 && sync /dev/fd/3 &&
     mv -f -T -- "$t" "./$name"; then
    exit 0
  fi
  rm -f -- "$t"; die EIO "cannot write '$p'";;
prepare)
  walk "$p" parent 1; check; writable; where || die EIO "cannot resolve '$p'"
  emit printf '%s' "$w";;
commit)
  walk "$p" parent; check; writable; tmpname "$1"
  [ -f "$t" ] && [ ! -L "$t" ] || die EIO "the upload of '$p' did not arrive beside it"
  chmod "$m" -- "$t" && mv -f -T -- "$t" "./$name" && exit 0
  rm -f -- "$t"; die EIO "cannot write '$p'";;
discard)
  walk "$p" parent; check; tmpname "$1"; rm -f -- "$t";;
archive-in)
  walk "$p" all 1; check
  tar -x -f - --no-same-owner --no-same-permissions 2>&9; s=$?
  emit find . -mindepth 1 -type f -printf '%y\t%s\t%T@\t%D:%i\t%P\0'
  exit $s;;
archive-out)
  # GNU tar walks a tree from "." with openat(parent, name, O_NOFOLLOW), where a name list
  # (-T) would be opened as whole paths: what is not wanted is excluded instead (stdin).
  walk "$p" all; check
  emit tar -c -f - --format=posix --no-wildcards --anchored -X - . 2>&9;;
run)
  walk "$p" all; check
  exec 2>&9 9>&-
  exec /bin/sh -c -- "$1";;
*)
  die EIO "unknown operation '$op'";;
esac
)SH";

int errnoOf(const QByteArray &kind)
{
    static const struct
    {
        const char *name;
        int value;
    } table[] = {{"ENOENT", ENOENT}, {"EEXIST", EEXIST}, {"EISDIR", EISDIR}, {"ENOTDIR", ENOTDIR},
                 {"EACCES", EACCES}, {"ELOOP", ELOOP},   {"EINVAL", EINVAL}};
    for (const auto &e : table) {
        if (kind == e.name)
            return e.value;
    }
    return EIO;
}

} // namespace

QString confinedScript(Channel channel, const QString &root, const QString &op, const QString &path,
                       const QStringList &args)
{
    QString script = QStringLiteral("set -- ") +
                     (channel == Channel::Text ? QStringLiteral("text") : QStringLiteral("raw")) +
                     u' ' + shellQuote(root) + u' ' + shellQuote(op) + u' ' + shellQuote(path);
    for (const QString &a : args)
        script += u' ' + shellQuote(a);
    script += u'\n';
    script += QLatin1String(kScript);
    return script;
}

QString confinedTempName(const QString &entryName)
{
    return QString::fromUtf8(atomicTempName(entryName.toUtf8()));
}

void throwIfRefused(Channel channel, int exitCode, const QByteArray &out, const QByteArray &err)
{
    if (exitCode != kConfinedRefusal)
        return;
    const QByteArray &stream = channel == Channel::Text ? out : err;
    const qsizetype at = stream.lastIndexOf("\001elsai:");
    if (at < 0 || (channel == Channel::Text && (at == 0 || stream.at(at - 1) != '\n')))
        return;
    QByteArray line = stream.mid(at + 7);
    if (const qsizetype nl = line.indexOf('\n'); nl >= 0)
        line.truncate(nl);
    const qsizetype colon = line.indexOf(':');
    if (colon <= 0)
        return;
    throwErrnoError(errnoOf(line.left(colon)), QString::fromUtf8(line.mid(colon + 1)));
}

QByteArray confinedPayload(Channel channel, int exitCode, const QByteArray &out,
                           const QByteArray &err, const QString &service)
{
    throwIfRefused(channel, exitCode, out, err);
    if (exitCode != 0)
        throw OSError(
            QStringLiteral("a file operation in the %1 sandbox failed (exit %2: %3); "
                           "does the sandbox have GNU coreutils and findutils?")
                .arg(service)
                .arg(exitCode)
                .arg(QString::fromUtf8((channel == Channel::Text ? out : err).trimmed().left(200))),
            EIO);
    return channel == Channel::Text ? QByteArray::fromBase64(out.trimmed()) : out;
}

QStringList confinedRangeArgs(qint64 offset, qint64 maxBytes)
{
    if (offset < 0 || maxBytes < 0)
        throw ValueError(QStringLiteral("a file range needs offset >= 0 and max_bytes >= 0"));
    return {QString::number(offset), QString::number(maxBytes)};
}

FileRange confinedRange(const QByteArray &payload, qint64 maxBytes, const QString &service)
{
    const qsizetype nl = payload.indexOf('\n');
    bool ok = false;
    const qint64 total = nl > 0 && nl <= 20 ? payload.left(nl).toLongLong(&ok) : -1;
    if (!ok || total < 0)
        throw OSError(QStringLiteral("the %1 sandbox answered a ranged read without the file's "
                                     "size")
                          .arg(service),
                      EIO);
    FileRange range{payload.sliced(nl + 1), total};
    if (range.data.size() > maxBytes)
        range.data.truncate(qsizetype(maxBytes));
    return range;
}

QList<FileInfo> confinedEntries(const QByteArray &payload, const QString &dir)
{
    QList<FileInfo> out;
    for (const FindRecord &r : parseFindRecords(payload)) {
        // a hostile or broken answer must not name paths outside the folder
        if (r.name.isEmpty() || r.name == QLatin1String("..") || r.name.contains(u'/') ||
            (r.name == QLatin1String(".") && !dir.isEmpty()))
            continue;
        out.append(r.toInfo(dir.isEmpty() ? r.name : dir + u'/' + r.name));
    }
    return out;
}

QHash<QString, FindRecord> confinedTree(const QByteArray &payload)
{
    QHash<QString, FindRecord> out;
    for (FindRecord &r : parseFindRecords(payload)) {
        // a broken or hostile answer must not name paths outside the workspace
        const QStringList segments = r.name.split(u'/');
        if (segments.contains(QString()) || segments.contains(QStringLiteral(".")) ||
            segments.contains(QStringLiteral("..")))
            continue;
        QString name = r.name;
        out.insert(std::move(name), std::move(r));
    }
    return out;
}

void walkConfinedTree(const QByteArray &payload, const QString &dir,
                      const std::function<WalkStep(const WalkEntry &)> &visit)
{
    const QHash<QString, FindRecord> tree = confinedTree(payload);
    QList<const FindRecord *> records;
    records.reserve(tree.size());
    for (const FindRecord &r : tree)
        records.append(&r);
    // depth first, each folder's entries by name: '/' sorts before every other character
    std::sort(records.begin(), records.end(), [](const FindRecord *a, const FindRecord *b) {
        const qsizetype n = qMin(a->name.size(), b->name.size());
        for (qsizetype i = 0; i < n; ++i) {
            const QChar x = a->name.at(i), y = b->name.at(i);
            if (x != y)
                return x == u'/' || (y != u'/' && x < y);
        }
        return a->name.size() < b->name.size();
    });
    const QString prefix = dir.isEmpty() ? QString() : dir + u'/';
    QString skipped; // a folder the visitor skipped, with its '/'
    for (const FindRecord *r : std::as_const(records)) {
        if (!skipped.isEmpty() && r->name.startsWith(skipped))
            continue;
        WalkEntry e;
        e.path = prefix + r->name;
        const FileInfo info = r->toInfo(e.path);
        e.type = info.type;
        e.size = info.size;
        e.mtimeMs = info.mtimeMs;
        e.depth = int(r->name.count(u'/'));
        if (e.depth >= ExecutionBackend::MaxWalkDepth)
            continue;
        const WalkStep step = visit(e);
        if (step == WalkStep::Stop)
            return;
        skipped = step == WalkStep::SkipFolder && e.type == FileInfo::Type::Directory
                      ? r->name + u'/'
                      : QString();
    }
}

} // namespace elsai::remote
