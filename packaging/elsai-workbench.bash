# bash completion for elsai-workbench. The options and what each takes are read from the
# program's own --help (placeholders <DIR>, <FILE>, <PLAN>), so they never go stale.
# SPDX-FileCopyrightText: The elsai workbench authors
# SPDX-License-Identifier: MIT

_elsai_workbench()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    local help
    help=$("${COMP_WORDS[0]}" --help 2>/dev/null) || return
    local kind=
    if [[ $prev == --[a-z]* ]]; then
        # the placeholder --help shows after the option: "  --seed-from <DIR>   …"
        kind=$(awk -v opt="$prev" '{ for (i = 1; i < NF; ++i) if ($i == opt && $(i + 1) ~ /^</) {
                   v = $(i + 1); gsub(/[<>]/, "", v); print v; exit } }' <<<"$help")
    fi
    case $prev in
    --backend)
        mapfile -t COMPREPLY < <(compgen -W "local bwrap ssh docker daytona agentcore" -- "$cur")
        return ;;
    --flush-no-base)
        mapfile -t COMPREPLY < <(compgen -W "keep-both overwrite" -- "$cur")
        return ;;
    --agent-mode)
        mapfile -t COMPREPLY < <(compgen -W "read_write read_only" -- "$cur")
        return ;;
    --run-agent)
        local demos
        demos=$(grep -o 'demo:[a-z-]*' <<<"$help" | sort -u)
        mapfile -t COMPREPLY < <(compgen -W "$demos" -- "$cur"; compgen -f -- "$cur")
        return ;;
    esac
    case $kind in
    DIR)
        mapfile -t COMPREPLY < <(compgen -d -- "$cur")
        return ;;
    FILE)
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return ;;
    ?*)
        return ;; # a value nobody can guess: a number, a host, a name
    esac
    if [[ $cur == -* ]]; then
        local options
        options=$(grep -o -- '--[a-z][a-z0-9-]*' <<<"$help" | sort -u)
        mapfile -t COMPREPLY < <(compgen -W "$options" -- "$cur")
    fi
}
complete -F _elsai_workbench elsai-workbench
