// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "remotescript.h"

#include "errors.h"
#include "findrecord.h"
#include "shellquote.h"

#include <cerrno>

namespace elsai::ssh {

using remote::shellQuote;

// Runs in the remote login shell (bash, dash, ksh: POSIX features only). The client refuses
// `..` and absolute paths; here a path is never checked as a string and then used: the helper
// enters its folders one component at a time with `cd -P` (the kernel follows a link, and the
// shell's working folder stays pinned to the folder reached, wherever it is renamed later),
// asks the kernel where that folder is (coreutils `pwd -P`, getcwd in a child: a shell's own
// `pwd -P` may be computed from the path text it was given, bash's is) and refuses anything
// not beneath R; only then does it touch the last component, relative to that folder and
// without following a link (dd iflag=nofollow, find without -L, O_EXCL creation, a rename
// within the folder). walk: $2 = parent stops before the last component (left in $name),
// $3 = 1 creates missing folders; settle: the check, due once a folder was entered ($moved);
// follow: a read's final symlinks, resolved by the same walk.
static const char kHelper[] = R"SH(R=$1; op=$2; shift 2
unset CDPATH
pwdx=/bin/pwd; [ -x /bin/pwd ] || pwdx='env pwd' # (NixOS has no /bin/pwd)
die() { printf '\001elsai:%s:%s\n' "$1" "$2" >&2; exit 253; }
confined() {
  h=$($pwdx -P && echo .) || return 1
  h=${h%.}; h=${h%?}
  case $h in "$R"|"$R"/*) return 0;; esac; return 1
}
settle() {
  [ -z "$moved" ] || confined || die EACCES "'$p' leaves the workspace through a symlink"
  moved=
}
home() { cd -P -- "$R" || die ENOENT "the workspace folder $R is gone"; moved=; }
stuck() {
  settle
  if [ -L "./$1" ] && [ ! -e "./$1" ]; then
    case $(readlink -- "./$1") in /*|..|../*|*/..|*/../*)
      die EACCES "'$p' leaves the workspace through a dangling symlink";; esac
  fi
  [ -e "./$1" ] || die ENOENT "'$p': no such file or folder"
  [ -d "./$1" ] || die ENOTDIR "'$p': '$1' is not a folder"
  die EACCES "'$p': cannot enter the folder '$1'"
}
walk() {
  rest=$1; name=
  while [ -n "$rest" ]; do
    c=${rest%%/*}
    case $rest in */*) rest=${rest#*/};; *) rest=;; esac
    case $c in ''|.) continue;; esac
    if [ -z "$rest" ] && [ "$2" = parent ] && [ "$c" != .. ]; then name=$c; return 0; fi
    if [ -n "$3" ] && [ "$c" != .. ] && [ ! -e "./$c" ] && [ ! -L "./$c" ]; then
      settle
      mkdir -- "./$c" 2>/dev/null || [ -d "./$c" ] ||
        die EIO "cannot create the folder '$c' of '$p'"
    fi
    cd -P -- "./$c" 2>/dev/null || stuck "$c"
    moved=1
  done
}
follow() {
  hops=0
  while settle; [ -n "$name" ] && [ -L "./$name" ]; do
    hops=$((hops + 1))
    [ "$hops" -le 40 ] || die EIO "'$p': too many levels of symbolic links"
    t=$(readlink -- "./$name") || die EIO "cannot read the symlink '$name' of '$p'"
    case $t in /*) cd -P / || die EIO "cannot resolve '$p'"; moved=1;; esac
    walk "$t" parent
  done
}
sweep() {
  for i in 1 2 3; do
    l=$(grep -las -F -- "ELSAI_SSH_CALL=$1" /proc/[0-9]*/environ)
    [ -n "$l" ] || break # (grep exits 2 for processes that vanished meanwhile)
    for f in $l; do f=${f#/proc/}; kill -9 "${f%/environ}" 2>/dev/null; done
  done
}
p=$1
case $op in
read|range)
  home; walk "$1" parent; follow
  [ -n "$name" ] && [ ! -d "./$name" ] || die EISDIR "cannot read '$1': it is a folder"
  [ -e "./$name" ] || die ENOENT "'$1': no such file or folder"
  [ -f "./$name" ] || die EIO "cannot read '$1': not a regular file"
  f=iflag=nofollow,nonblock
  if [ "$op" = range ]; then
    case $2:$3 in *[!0-9:]*|:*|*:) die EIO "a file range needs two byte counts";; esac
    stat -c %s -- "./$name" 2>/dev/null || die EIO "cannot read '$1'"
    f="$f,skip_bytes,count_bytes skip=$2 count=$3"
  fi
  dd if="./$name" $f bs=128K status=none 2>/dev/null && exit 0
  [ -L "./$name" ] && die EACCES "'$1' was replaced by a symlink while being read; try again"
  die EIO "cannot read '$1'";;
write)
  home; walk "$1" parent 1; settle
  [ -L "./$name" ] && die EACCES "refusing to write '$1': it is a symlink"
  [ -d "./$name" ] && die EISDIR "cannot write '$1': the path names a folder"
  m=644
  if [ -f "./$name" ]; then
    m=$(stat -c %a -- "./$name" 2>/dev/null); case $m in ''|*[!0-7]*) m=644;; esac
  fi
  # Created with O_EXCL under a name only this call uses, then held open: chmod and sync act
  # on that file through /dev/fd even if the name is swapped meanwhile.
  tmp=./.elsai-tmp-$2; set -C
  command exec 3>"$tmp" || die EIO "cannot create a temporary file beside '$1'"
  if [ -f /dev/fd/3 ] && cat >&3 && chmod "$m" /dev/fd/3 && sync /dev/fd/3 &&
     mv -f -T -- "$tmp" "./$name"; then
    exit 0
  fi
  rm -f -- "$tmp"; die EIO "cannot write '$1'";;
list)
  home; walk "$1" all; settle
  [ -n "$2" ] || exec find . -mindepth 1 -maxdepth 1 -printf '%y\t%s\t%T@\t%D:%i\t%f\0'
  cap=$2; case $cap in *[!0-9]*) die EIO "a listing cap is a count";; esac
)SH" ELSAI_CAPPED_LISTING_SH R"SH(  ;;
stat)
  home
  [ -n "$1" ] || exec find . -maxdepth 0 -printf '%y\t%s\t%T@\t%D:%i\t%f\0'
  walk "$1" parent; settle
  [ -e "./$name" ] || [ -L "./$name" ] || die ENOENT "'$1': no such file or folder"
  exec find "./$name" -maxdepth 0 -printf '%y\t%s\t%T@\t%D:%i\t%f\0';;
remove)
  home; walk "$1" parent; settle
  [ -e "./$name" ] || [ -L "./$name" ] || die ENOENT "cannot remove '$1': no such file or folder"
  if [ -d "./$name" ] && [ ! -L "./$name" ]; then
    [ "$2" = 1 ] || die EISDIR "cannot remove '$1': it is a folder (remove it recursively)"
  fi
  rm -rf -- "./$name" || die EIO "cannot remove '$1' completely";;
mkdirs)
  home; walk "$1" all 1; settle;;
listall)
  exec find "$R" -mindepth 1 -printf '%y\t%s\t%T@\t%D:%i\t%P\0';;
seed)
  tar -x -f - -C "$R" --no-same-owner --no-same-permissions; rc=$?
  find "$R" -mindepth 1 -type f -printf '%y\t%s\t%T@\t%D:%i\t%P\0'
  exit $rc;;
pack)
  # GNU tar walks a tree from "." with openat(parent, name, O_NOFOLLOW), where a name list
  # (-T) would be opened as whole paths: what is not wanted is excluded instead (stdin).
  home
  exec tar -c -f - --format=posix --no-wildcards --anchored -X - .;;
exec)
  home; walk "$1" all; settle
  to=$2 grace=$3 tok=$4 cmd=$5; shift 5
  if [ $# -gt 0 ]; then
    ELSAI_SSH_CALL=$tok timeout -k "$grace" "$to" env -- "$@" sh -c -- "$cmd" </dev/null & p=$!
  else
    ELSAI_SSH_CALL=$tok timeout -k "$grace" "$to" sh -c -- "$cmd" </dev/null & p=$!
  fi
  wait "$p"; rc=$?
  kill -9 -- "-$p" 2>/dev/null
  case $rc in 124|137) sweep "$tok";; esac
  exit $rc;;
sweep)
  sweep "$1";;
*)
  die EIO "unknown operation '$op'";;
esac
)SH";

QByteArray helperScript()
{
    return QByteArray(kHelper);
}

QByteArray helperCommand(const QString &root, const QString &op, const QStringList &args)
{
    QByteArray cmd = "set -- " + shellQuote(root.toUtf8()) + ' ' + shellQuote(op.toUtf8());
    for (const QString &a : args)
        cmd += ' ' + shellQuote(a.toUtf8());
    cmd += '\n';
    cmd += kHelper;
    return cmd;
}

HelperError parseHelperError(int exitCode, const QByteArray &stderrData)
{
    if (exitCode != kHelperExit)
        return {};
    const qsizetype at = stderrData.lastIndexOf("\001elsai:");
    if (at < 0)
        return {};
    QByteArray line = stderrData.mid(at + 7);
    line = line.left(line.indexOf('\n'));
    const qsizetype colon = line.indexOf(':');
    if (colon <= 0)
        return {};
    return {QString::fromUtf8(line.left(colon)), QString::fromUtf8(line.mid(colon + 1))};
}

void throwHelperError(const HelperError &e)
{
    const QString msg = e.message + QStringLiteral(" (on the SSH remote)");
    if (e.kind == u"ENOENT")
        throw FileNotFoundError(msg, ENOENT);
    if (e.kind == u"EEXIST")
        throw FileExistsError(msg, EEXIST);
    if (e.kind == u"EISDIR")
        throw IsADirectoryError(msg, EISDIR);
    if (e.kind == u"ENOTDIR")
        throw NotADirectoryError(msg, ENOTDIR);
    if (e.kind == u"EACCES")
        throw PermissionError(msg, EACCES);
    throw OSError(msg, EIO);
}

} // namespace elsai::ssh
