// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "confinedscript.h"

#include "errors.h"
#include "findrecord.h"
#include "shellquote.h"

#include <cerrno>

namespace elsai::remote {

namespace {

// POSIX sh (dash, bash). `moved` says the shell changed folder since the last kernel check;
// `check` is run before every effect and before the last component is used. A link as the
// last component is followed (read) by walking its target the same way, never by name.
const char kScript[] = R"SH(exec 2>/dev/null
unset CDPATH
R=$1 op=$2 p=$3; shift 3
die() { printf '\n\001elsai:%s:%s\n' "$1" "$2"; exit 253; }
where() { w=$(/bin/pwd -P && echo .) || return 1; w=${w%.}; w=${w%?}; }
cd -P -- "$R" || die ENOENT "the workspace folder is gone; restart the sandbox"
where || die EIO "cannot resolve the workspace folder"
R=$w moved=
check() {
  if [ -n "$moved" ]; then
    where && case $w in "$R"|"$R"/*) moved=; return 0;; esac
    die EACCES "'$p' leads outside the workspace through a symlink; use a path inside it"
  fi
}
stuck() {
  check
  if [ -L "./$1" ] && [ ! -e "./$1" ]; then
    case $(readlink -- "./$1") in /*|..|../*|*/..|*/../*)
      die EACCES "'$p' leads outside the workspace through a dangling symlink";; esac
    readlink -f -- "./$1" >/dev/null || die ELOOP "'$p': too many levels of symbolic links"
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
    if [ -n "$mk" ] && [ ! -e "./$c" ] && [ ! -L "./$c" ]; then
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
    [ "$hops" -le 40 ] || die ELOOP "'$p': too many levels of symbolic links"
    t=$(readlink -- "./$name") || die EIO "cannot read the symlink '$name' of '$p'"
    case $t in /*) cd -P / || die EIO "cannot resolve '$p'"; moved=1;; esac
    walk "$t" parent
  done
}
entry() { find "${1:-.}" -maxdepth 0 -printf '%y\t%s\t%T@\t%D:%i\t%f\0' | base64 -w0; }
writable() {
  [ -n "$name" ] || die EISDIR "cannot write '$p': it is a folder"
  [ -L "./$name" ] && die EACCES "refusing to write '$p': it is a symlink"
  [ -d "./$name" ] && die EISDIR "cannot write '$p': it is a folder"
  m=644
  if [ -f "./$name" ]; then
    m=$(stat -c %a -- "./$name"); case $m in ''|*[!0-7]*) m=644;; esac
  fi
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
  exec 4>&1
  rc=$( { { [ -z "$n" ] || echo "$n"
          dd if="./$name" $f bs=64K status=none; echo $? >&5; } | base64 -w0 >&4; } 5>&1 )
  [ "$rc" = 0 ] && exit 0
  [ -L "./$name" ] && die EACCES "'$p' was replaced by a symlink while being read; try again"
  die EIO "cannot read '$p'";;
list)
  walk "$p" all; check
  [ -n "$1" ] || { find . -mindepth 1 -maxdepth 1 -printf '%y\t%s\t%T@\t%D:%i\t%f\0' |
                   base64 -w0; exit 0; }
  cap=$1; case $cap in *[!0-9]*) die EINVAL "a listing cap is a count";; esac
  {
)SH" ELSAI_CAPPED_LISTING_SH R"SH(  } | base64 -w0;;
tree)
  walk "$p" all; check
  find . -mindepth 1 -printf '%y\t%s\t%T@\t%D:%i\t%P\0' | base64 -w0;;
stat)
  walk "$p" parent; check
  [ -n "$name" ] || { entry; exit 0; }
  [ -e "./$name" ] || [ -L "./$name" ] || die ENOENT "'$p': no such file or folder"
  entry "./$name";;
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
  printf '%s' "$w" | base64 -w0;;
write)
  walk "$p" parent 1; check; writable
  tmp=./.elsai-tmp-$1; set -C
  command exec 3>"$tmp" || die EIO "cannot create a temporary file beside '$p'"
  if [ -f /dev/fd/3 ] && printf '%s' "$2" | base64 -d >&3 && chmod "$m" /dev/fd/3 &&
     mv -f -T -- "$tmp" "./$name"; then
    exit 0
  fi
  rm -f -- "$tmp"; die EIO "cannot write '$p'";;
prepare)
  walk "$p" parent 1; check; writable; where || die EIO "cannot resolve '$p'"
  printf '%s' "$w" | base64 -w0;;
commit)
  walk "$p" parent; check; writable
  tmp=./.elsai-tmp-$1
  [ -f "$tmp" ] && [ ! -L "$tmp" ] || die EIO "the upload of '$p' did not arrive beside it"
  chmod "$m" -- "$tmp" && mv -f -T -- "$tmp" "./$name" && exit 0
  rm -f -- "$tmp"; die EIO "cannot write '$p'";;
discard)
  walk "$p" parent; check; rm -f -- "./.elsai-tmp-$1";;
*)
  die EIO "unknown operation '$op'";;
esac
)SH";

} // namespace

QString confinedScript(const QString &root, const QString &op, const QString &path,
                       const QStringList &args)
{
    QString script =
        QStringLiteral("set -- ") + shellQuote(root) + u' ' + shellQuote(op) + u' ' + shellQuote(path);
    for (const QString &a : args)
        script += u' ' + shellQuote(a);
    script += u'\n';
    script += QLatin1String(kScript);
    return script;
}

QString confinedTempName(const QString &token)
{
    return QStringLiteral(".elsai-tmp-") + token;
}

QByteArray confinedPayload(int exitCode, const QByteArray &output, const QString &service)
{
    const qsizetype at = output.lastIndexOf("\n\001elsai:");
    if (exitCode == kConfinedRefusal && at >= 0) {
        QByteArray line = output.mid(at + 8);
        line.truncate(line.indexOf('\n') < 0 ? line.size() : line.indexOf('\n'));
        const qsizetype colon = line.indexOf(':');
        const QByteArray kind = line.left(colon);
        const QString msg = QString::fromUtf8(line.mid(colon + 1)) +
                            QStringLiteral(" (in the %1 sandbox)").arg(service);
        if (kind == "ENOENT")
            throw FileNotFoundError(msg, ENOENT);
        if (kind == "EEXIST")
            throw FileExistsError(msg, EEXIST);
        if (kind == "EISDIR")
            throw IsADirectoryError(msg, EISDIR);
        if (kind == "ENOTDIR")
            throw NotADirectoryError(msg, ENOTDIR);
        if (kind == "EACCES")
            throw PermissionError(msg, EACCES);
        if (kind == "ELOOP")
            throw OSError(msg, ELOOP);
        if (kind == "EINVAL")
            throw OSError(msg, EINVAL);
        throw OSError(msg, EIO);
    }
    if (exitCode != 0)
        throw OSError(QStringLiteral("a file operation in the %1 sandbox failed (exit %2: %3); "
                                     "does the sandbox have GNU coreutils and findutils?")
                          .arg(service)
                          .arg(exitCode)
                          .arg(QString::fromUtf8(output.trimmed().left(200))),
                      EIO);
    return QByteArray::fromBase64(output.trimmed());
}

QStringList confinedRangeArgs(qint64 offset, qint64 maxBytes)
{
    if (offset < 0 || maxBytes < 0)
        throw ValueError(QStringLiteral("a file range needs offset >= 0 and max_bytes >= 0"));
    return {QString::number(offset), QString::number(maxBytes)};
}

FileRange confinedRange(const QByteArray &payload, const QString &service)
{
    const qsizetype nl = payload.indexOf('\n');
    bool ok = false;
    const qint64 total = nl > 0 && nl <= 20 ? payload.left(nl).toLongLong(&ok) : -1;
    if (!ok || total < 0)
        throw OSError(QStringLiteral("the %1 sandbox answered a ranged read without the file's "
                                     "size")
                          .arg(service),
                      EIO);
    return {payload.sliced(nl + 1), total};
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

} // namespace elsai::remote
