// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "confinedscript.h"

#include "atomicwrite.h"
#include "errnoerror.h"
#include "errors.h"
#include "findrecord.h"
#include "shellquote.h"
#include "workspacefs.h"

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
    [ -z "$rest" ] && die ENOTDIR "'$p' is not a folder"
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
  # (-T) would be opened as whole paths: what is not wanted is excluded instead, one ./name a
  # line, from $1: stdin ("" or "-"), inline ("=" and base64), or the temp file $1 of the
  # workspace root (read without following a link before the walk, then removed). $2: the
  # most bytes sent (the stream is cut there; the exit status is then head's).
  case $1 in
  ''|-) excluded() { cat; };;
  =*) excluded() { printf '%s' "${1#=}" | base64 -d; };;
  *) tmpname "$1"; x=$(dd if="$t" iflag=nofollow status=none && echo .); s=$?; rm -f -- "$t"
     [ "$s" = 0 ] || die EIO "cannot read the archive's exclusions"
     x=${x%.}; excluded() { printf '%s' "$x"; };;
  esac
  cap=$2; case $cap in *[!0-9]*) die EINVAL "an archive bound is a byte count";; esac
  walk "$p" all; check
  [ "$E" = text ] && exec 9>/dev/null # tar's warnings would join the payload
  archived() { a=$1; shift
    excluded "$a" | tar -c -f - --format=posix "$@" --no-wildcards --anchored -X - . 2>&9; }
  if [ -z "$cap" ]; then emit archived "$1"; exit; fi
  # a bounded fetch reads the files and keeps none: no times, so no pax header per member
  capped() { archived "$1" --pax-option=delete=atime,delete=ctime,delete=mtime | head -c "$cap"; }
  emit capped "$1";;
manifest)
  # The walk's start (the sandbox's clock); with a time ($1), the BLAKE2b-256 (b2sum -l 256:
  # the checkpoint store's own hash) of every file whose ctime or mtime is after it; then,
  # after a NUL-ended "L", every folder, file and link with its metadata. Hashed before
  # listed: a file changed after its hash was taken shows a ctime past the start.
  walk "$p" all; check
  case $1 in -) ;; ''|*[!0-9.]*) die EINVAL "a manifest needs a time or '-'";; *)
    command -v b2sum >/dev/null ||
      die ENOENT "b2sum is missing in the sandbox (GNU coreutils 8.26 or later)";; esac
  listed() {
    date +%s.%N | tr -d '\n'; printf '\000'
    [ "$1" = - ] ||
      find . -mindepth 1 -type f \( -newerct "@$1" -o -newermt "@$1" \) -print0 |
        xargs -0 -r b2sum -z -l 256 -- || :
    printf 'L\000'
    find . -mindepth 1 \( -type f -o -type d -o -type l \) \
      -printf '%y\t%m\t%s\t%T@\t%C@\t%D:%i\t%P\0%l\0'
  }
  emit listed "$1";;
pack)
  # A tar of the NUL-separated ./names of the input ($1: "-" stdin, else the temp file $1 in
  # the folder, read without following a link, then removed). tar keeps a link as a link; a
  # name that vanished is left out (the caller checks what arrived against its listing).
  walk "$p" all; check
  if [ "$1" = - ]; then names() { cat; }
  else tmpname "$1"; names() { dd if="$t" iflag=nofollow status=none; rm -f -- "$t"; }; fi
  packed() { names | tar -c -f - --format=posix --no-recursion --null -T - || :; }
  emit packed;;
apply)
  # A restore (remotetree.h). $1: the tar, "-" on stdin, "=" already unpacked in the staging
  # folder, else the temp file $1 in the folder (removed); $2: the staging folder (a temp name
  # in the folder); $3: the temp name each file and link is made under before its rename. The tar holds `plan`
  # and the files to write named 0, 1, ...: five lines a record, `\` and newline of a path or
  # link text escaped as `\\` and `\n`: R path (remove), D path (folders), F path index mode
  # mtime (write), L path text (link), M path mode (a folder's mode). Every path is walked to
  # from the root like any other operation's, the last component never followed.
  walk "$p" all; check
  tmpname "$2"; S=$t
  case $1 in -|=) A=;; *) tmpname "$1"; A=$t;; esac
  tmpname "$3"; T=$t
  for d in ./.restore.elsai-tmp-*; do # what a restore cut off left (never followed)
    [ "$d" = "$S" ] || [ "$d" = "$A" ] || rm -rf -- "$d"
  done
  if [ "$1" != = ]; then
    rm -rf -- "$S"; mkdir -m 700 -- "$S" || die EIO "cannot create the restore's staging folder"
  fi
  cd -P -- "$S" || die EIO "the restore's staging folder is missing"
  where && [ "$w" = "$R/${S#./}" ] || die EACCES "the restore's staging folder was replaced"
  SP=$w
  if [ "$1" = - ]; then tar -x -f - --no-same-owner --no-same-permissions ||
      die EIO "cannot unpack the restore's files"
  elif [ -n "$A" ]; then
    dd if="$R/${A#./}" iflag=nofollow status=none |
      tar -x -f - --no-same-owner --no-same-permissions ||
      die EIO "cannot unpack the restore's files"
    rm -f -- "$R/${A#./}"
  fi
  command exec 3<./plan || die EIO "the restore's plan did not arrive"
  dec() { case $1 in *\\*) v=$(printf '%bx' "$1"); v=${v%x};; *) v=$1;; esac; }
  while IFS= read -r k <&3 && IFS= read -r q <&3 && IFS= read -r x <&3 &&
        IFS= read -r y <&3 && IFS= read -r z <&3; do
    dec "$q"; p=$v
    cd -P -- "$R" || die ENOENT "the workspace folder is gone; restart the sandbox"
    moved=1
    case $k in
    R) walk "$p" parent; check; [ -n "$name" ] || die EACCES "refusing to remove the workspace root"
       rm -rf -- "./$name" || die EIO "cannot remove '$p'";;
    D) walk "$p" all 1; check;;
    F) case $x:$y:$z in *[!0-9.:]*|:*|*::*|*:) die EINVAL "a malformed restore step for '$p'";; esac
       walk "$p" parent 1; check; [ -n "$name" ] || die EISDIR "cannot write the workspace root"
       rm -f -- "$T"; set -C
       command exec 4>"$T" || die EIO "cannot create a temporary file beside '$p'"
       set +C
       if [ -f /dev/fd/4 ] && cat -- "$SP/$x" >&4 && chmod "$y" /dev/fd/4 &&
          touch -c -m -d "@$z" /dev/fd/4 && exec 4>&- && mv -f -T -- "$T" "./$name"; then :
       else exec 4>&-; rm -f -- "$T"; die EIO "cannot restore '$p'"; fi;;
    L) dec "$x"; walk "$p" parent 1; check; [ -n "$name" ] || die EISDIR "cannot link the root"
       rm -f -- "$T"
       ln -s -T -- "$v" "$T" && mv -f -T -- "$T" "./$name" ||
         { rm -f -- "$T"; die EIO "cannot restore the link '$p'"; };;
    M) case $x in ''|*[!0-7]*) die EINVAL "a malformed mode for '$p'";; esac
       walk "$p" all; check; chmod "$x" . || die EIO "cannot restore the mode of '$p'";;
    *) die EINVAL "an unknown restore step '$k'";;
    esac
  done
  exec 3<&-
  cd -P -- "$R" && rm -rf -- "$S"
  sync -f . 2>/dev/null || sync
  exit 0;;
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

QString confinedPath(const QString &path)
{
    if (path.isEmpty() || path == QLatin1String("."))
        return {};
    return WorkspaceFs::normalize(path);
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
