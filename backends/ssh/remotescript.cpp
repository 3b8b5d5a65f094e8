#include "remotescript.h"

#include "errors.h"

#include <cerrno>

namespace elsai::ssh {

// Runs in the remote login shell (bash, dash, ksh: POSIX features only). Every path is checked
// twice: the client refuses `..` and absolute paths, and here each existing path is resolved
// with `realpath -e` (symlinks followed) and must stay beneath R. Folders are created one
// component at a time so `mkdir -p` never follows a symlink out of the workspace.
static const char kHelper[] = R"SH(R=$1; op=$2; shift 2
die() { printf '\001elsai:%s:%s\n' "$1" "$2" >&2; exit 253; }
inside() { case $1 in "$R"|"$R"/*) return 0;; esac; return 1; }
resolve() {
  if ! r=$(realpath -e -- "$1" 2>/dev/null); then
    r=$(realpath -m -- "$1" 2>/dev/null) && ! inside "$r" &&
      die EACCES "'$2' leaves the workspace through a (dangling) symlink"
    die ENOENT "'$2': no such file or folder"
  fi
  inside "$r" || die EACCES "'$2' leaves the workspace through a symlink"
}
parent() {
  case $1 in */*) pd=/${1%/*};; *) pd=;; esac
  name=${1##*/}
  resolve "$R$pd" "$1"; dir=$r
  [ -d "$dir" ] || die ENOTDIR "'$1': a parent is not a folder"
}
mkdirs() {
  dir=$R; rest=$1
  while [ -n "$rest" ]; do
    c=${rest%%/*}
    case $rest in */*) rest=${rest#*/};; *) rest=;; esac
    [ -n "$c" ] || continue
    next=$dir/$c
    if [ -L "$next" ]; then resolve "$next" "$1"; next=$r
    elif [ ! -e "$next" ]; then
      mkdir -- "$next" 2>/dev/null || [ -d "$next" ] ||
        die EIO "cannot create the folder '$c' of '$1'"
    fi
    [ -d "$next" ] || die ENOTDIR "'$1': '$c' is not a folder"
    dir=$next
  done
}
sweep() {
  for i in 1 2 3; do
    l=$(grep -las -F -- "ELSAI_SSH_CALL=$1" /proc/[0-9]*/environ)
    [ -n "$l" ] || break # (grep exits 2 for processes that vanished meanwhile)
    for f in $l; do f=${f#/proc/}; kill -9 "${f%/environ}" 2>/dev/null; done
  done
}
case $op in
read)
  resolve "$R/$1" "$1"
  [ -d "$r" ] && die EISDIR "cannot read '$1': it is a folder"
  [ -f "$r" ] || die EIO "cannot read '$1': not a regular file"
  exec cat -- "$r";;
write)
  case $1 in */*) mkdirs "${1%/*}";; *) dir=$R;; esac
  t=$dir/${1##*/}
  [ -L "$t" ] && die EACCES "refusing to write '$1': it is a symlink"
  [ -d "$t" ] && die EISDIR "cannot write '$1': the path names a folder"
  tmp=$(mktemp -- "$dir/.elsai-tmp-XXXXXX") || die EIO "cannot create a temporary file beside '$1'"
  if [ -f "$t" ]; then m=$(stat -c %a -- "$t"); else m=644; fi
  if cat > "$tmp" && chmod "$m" -- "$tmp" && sync -- "$tmp" && mv -f -T -- "$tmp" "$t"; then
    exit 0
  fi
  rm -f -- "$tmp"; die EIO "cannot write '$1'";;
list)
  if [ -z "$1" ]; then r=$R; else resolve "$R/$1" "$1"; fi
  [ -d "$r" ] || die ENOTDIR "cannot list '$1': not a folder"
  exec find "$r" -mindepth 1 -maxdepth 1 -printf '%y\t%s\t%T@\t%f\0';;
stat)
  if [ -z "$1" ]; then t=$R; else parent "$1"; t=$dir/$name; fi
  [ -e "$t" ] || [ -L "$t" ] || die ENOENT "'$1': no such file or folder"
  exec find "$t" -maxdepth 0 -printf '%y\t%s\t%T@\t%f\0';;
remove)
  parent "$1"; t=$dir/$name
  [ -e "$t" ] || [ -L "$t" ] || die ENOENT "cannot remove '$1': no such file or folder"
  if [ -d "$t" ] && [ ! -L "$t" ]; then
    [ "$2" = 1 ] || die EISDIR "cannot remove '$1': it is a folder (remove it recursively)"
  fi
  rm -rf -- "$t" || die EIO "cannot remove '$1' completely";;
mkdirs)
  mkdirs "$1";;
listall)
  exec find "$R" -mindepth 1 -printf '%y\t%s\t%T@\t%P\0';;
seed)
  tar -x -f - -C "$R" --no-same-owner --no-same-permissions; rc=$?
  find "$R" -mindepth 1 -type f -printf '%y\t%s\t%T@\t%P\0'
  exit $rc;;
pack)
  cd -- "$R" || die ENOENT "the workspace folder is gone"
  exec tar -c -f - --format=posix --null --no-recursion -T -;;
exec)
  if [ -n "$1" ]; then
    resolve "$R/$1" "$1"
    [ -d "$r" ] || die ENOTDIR "cwd '$1' is not a folder"
  else r=$R; fi
  cd -- "$r" || die EIO "cannot enter '$1'"
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

QByteArray shellQuote(const QByteArray &text)
{
    QByteArray out;
    out.reserve(text.size() + 2);
    out += '\'';
    for (const char c : text) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    out += '\'';
    return out;
}

QByteArray shellQuote(const QString &text)
{
    return shellQuote(text.toUtf8());
}

QByteArray helperCommand(const QString &root, const QString &op, const QStringList &args)
{
    QByteArray cmd = "set -- " + shellQuote(root) + ' ' + shellQuote(op);
    for (const QString &a : args)
        cmd += ' ' + shellQuote(a);
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
