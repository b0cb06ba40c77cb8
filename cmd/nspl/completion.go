package main

import (
	"errors"
	"flag"
	"fmt"
	"sort"
	"strings"
)

// completionScripts are the scripts nspl completion prints, by shell. Each
// completes subcommands and flags from lists taken from the flag sets
// themselves (so a new flag completes without editing a script), and
// completes statements after -c and domain names after --domain by running
// nspl --suggest with the connection flags already on the command line.
// They parse --suggest's one-line JSON with a pattern, which suggestReply's
// fixed field order and escape-free candidate texts make exact. Candidates
// are data: --suggest offers only names grammar accepts (storedName), and
// the scripts still never let the shell expand a candidate's text (bash
// reads them line by line into COMPREPLY instead of through compgen -W,
// zsh passes them to compadd as arguments, fish prints them).
var completionScripts = map[string]string{
	"bash": bashCompletion,
	"zsh":  zshCompletion,
	"fish": fishCompletion,
}

// completedCommands are the subcommands whose flags the scripts complete
// (nspl cert, nspl fmt and nspl test have their own parsers and are added
// below).
var completedCommands = []string{"serve", "clock", "backup", "restore", "leave", "node", "remove", "lsp"}

// connectionFlags are the flags the scripts pass on to --suggest, so its
// domain names come from the node the command line names.
var connectionFlags = []string{"connect", "ca", "cert", "key", "token-file", "profile", "data-dir"}

// completionFlags returns the flags of nspl itself ("") and of each
// completed subcommand, spelt as help spells them, and the names of every
// flag that takes a value.
func completionFlags() (byCommand map[string][]string, valued []string) {
	byCommand = map[string][]string{}
	seen := map[string]bool{}
	for _, cmd := range append([]string{""}, completedCommands...) {
		args := []string{"--help"}
		if cmd != "" {
			args = []string{cmd, "--help"}
		}
		_, err := parseArgs(args)
		var h *helpRequest
		if !errors.As(err, &h) || h.flags == nil {
			continue
		}
		h.flags.VisitAll(func(f *flag.Flag) {
			byCommand[cmd] = append(byCommand[cmd], flagSpelling(f.Name))
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); (!ok || !b.IsBoolFlag()) && !seen[f.Name] {
				seen[f.Name] = true
				valued = append(valued, f.Name)
			}
		})
	}
	for cmd, fs := range ownFlagSets() {
		fs.VisitAll(func(f *flag.Flag) {
			byCommand[cmd] = append(byCommand[cmd], flagSpelling(f.Name))
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); (!ok || !b.IsBoolFlag()) && !seen[f.Name] {
				seen[f.Name] = true
				valued = append(valued, f.Name)
			}
		})
	}
	byCommand["cert"] = []string{"--dir", "--host", "--validity"}
	valued = append(valued, "dir", "host", "validity")
	sort.Strings(valued)
	return byCommand, valued
}

// ownFlagSets are the flag sets of the subcommands with parsers of their
// own, by name.
func ownFlagSets() map[string]*flag.FlagSet {
	return map[string]*flag.FlagSet{
		"fmt":  fmtFlagSet(&fmtOptions{}),
		"test": testFlagSet(&testOptions{}),
	}
}

// completionScript renders the script for shell.
func completionScript(shell string) string {
	byCommand, valued := completionFlags()
	var conn, connEq []string
	for _, f := range connectionFlags {
		conn = append(conn, "-"+f, "--"+f)
		connEq = append(connEq, "-"+f+"=*", "--"+f+"=*")
	}
	var arms strings.Builder
	cmds := append(append([]string(nil), completedCommands...), "cert", "fmt", "test")
	for _, cmd := range cmds {
		flags := strings.Join(byCommand[cmd], " ") + " --help"
		switch shell {
		case "bash":
			fmt.Fprintf(&arms, "        %s) flags='%s' ;;\n", cmd, flags)
		case "zsh":
			fmt.Fprintf(&arms, "      (%s) flags='%s' ;;\n", cmd, flags)
		case "fish":
			for _, f := range byCommand[cmd] {
				fmt.Fprintf(&arms, "complete -c nspl -n '__fish_seen_subcommand_from %s' %s\n", cmd, fishFlag(f, valued))
			}
		}
	}
	if shell == "fish" {
		for _, f := range byCommand[""] {
			fmt.Fprintf(&arms, "complete -c nspl -n '__fish_use_subcommand' %s\n", fishFlag(f, valued))
		}
	}
	r := strings.NewReplacer(
		"@COMMANDS@", strings.Join(commands, " "),
		"@VALUED@", strings.Join(valued, " "),
		"@TOPFLAGS@", strings.Join(byCommand[""], " ")+" --help",
		"@CONN@", strings.Join(conn, "|"),
		"@CONNEQ@", strings.Join(connEq, "|"),
		"@FISHCONN@", strings.Join(conn, " "),
		"@FISHCONNEQ@", "'"+strings.Join(connEq, "' '")+"'",
		"@ARMS@", strings.TrimRight(arms.String(), "\n"),
	)
	return r.Replace(completionScripts[shell])
}

// fishFlag is the complete(1) options for one flag: its name, and -r when
// it takes a value.
func fishFlag(spelt string, valued []string) string {
	name := strings.TrimLeft(spelt, "-")
	opt := "-l " + name
	if len(name) == 1 {
		opt = "-s " + name
	}
	i := sort.SearchStrings(valued, name)
	if i < len(valued) && valued[i] == name {
		opt += " -r"
	}
	return opt
}

const bashCompletion = `# bash completion for nspl, from nspl completion bash. Load it with
#     source <(nspl completion bash)
# or save it as ~/.local/share/bash-completion/completions/nspl.
# Statements after -c and domain names after --domain complete live through
# nspl --suggest, with the connection flags already on the command line.

_nspl_valued=' @VALUED@ '
_nspl_conn=()

# _nspl_suggest TEXT prints one line per candidate: KIND START TEXT.
_nspl_suggest() {
    local LC_ALL=C text=$1 out
    out=$(command nspl "${_nspl_conn[@]}" --suggest "$text" --cursor "${#text}" 2>/dev/null) || return 0
    local re='\{"text":"([^"]*)","kind":"([a-z]+)","replace":\{"start":([0-9]+),"end":[0-9]+\}\}'
    while [[ $out =~ $re ]]; do
        printf '%s %s %s\n' "${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}" "${BASH_REMATCH[1]}"
        out=${out#*"${BASH_REMATCH[0]}"}
    done
}

_nspl() {
    local LC_ALL=C words=() cword=0 i w
    # Put back the words bash split at = and : (--connect https://h:8001).
    for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
        w=${COMP_WORDS[i]}
        if ((i > 1)) && [[ $w == [=:] || ${words[${#words[@]}-1]} == *[=:] ]]; then
            words[${#words[@]}-1]+=$w
        else
            words+=("$w")
        fi
        ((i == COMP_CWORD)) && cword=$((${#words[@]} - 1))
    done
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${words[cword-1]} cmd= n
    _nspl_conn=()
    for ((i = 1; i < cword; i++)); do
        w=${words[i]}
        case $w in
        @CONN@)
            _nspl_conn+=("$w" "${words[i+1]}")
            ((i++)) ;;
        @CONNEQ@) _nspl_conn+=("$w") ;;
        -*=*) ;;
        -*)
            n=${w#-}
            n=${n#-}
            [[ $_nspl_valued == *" $n "* ]] && ((i++)) ;;
        *) [[ -z $cmd ]] && cmd=$w ;;
        esac
    done
    COMPREPLY=()
    local kind start t
    case $prev in
    -c|--c)
        # Readline replaces the text after an opening quote. A candidate
        # that rewrites what was typed (pro to a quoted prod-1) would shorten the
        # common prefix below the text typed, so only extensions are offered.
        [[ $cur == [\'\"]* ]] && cur=${cur:1}
        while read -r kind start t; do
            t=${cur:0:start}$t
            [[ $t == "$cur"* ]] && COMPREPLY+=("$t ")
        done < <(_nspl_suggest "$cur")
        compopt -o nospace 2>/dev/null
        return 0 ;;
    -domain|--domain)
        if [[ $cmd == clock || $cmd == backup ]]; then
            # Candidates are data: read line by line into COMPREPLY, never
            # through compgen -W, which would expand $(...) in them.
            local bt=$'\x60'
            while read -r kind start t; do
                t=${t//$bt/}
                [[ $kind == domain && $t == "$cur"* ]] && COMPREPLY+=("$t")
            done < <(_nspl_suggest "USE ")
            return 0
        fi ;;
    -format|--format)
        COMPREPLY=($(compgen -W "table json plain csv" -- "$cur"))
        return 0 ;;
    esac
    n=${prev#-}
    n=${n#-}
    if [[ $prev == -* && $_nspl_valued == *" $n "* ]]; then
        compopt -o default 2>/dev/null
        return 0
    fi
    if [[ $cur == -* ]]; then
        local flags
        case $cmd in
@ARMS@
        *) flags='@TOPFLAGS@' ;;
        esac
        COMPREPLY=($(compgen -W "$flags" -- "$cur"))
        return 0
    fi
    case $cmd in
    '') COMPREPLY=($(compgen -W "@COMMANDS@" -- "$cur")) ;;
    help) [[ $prev == help ]] && COMPREPLY=($(compgen -W "@COMMANDS@" -- "$cur")) ;;
    completion) [[ $prev == completion ]] && COMPREPLY=($(compgen -W "bash zsh fish" -- "$cur")) ;;
    cert) [[ $prev == cert ]] && COMPREPLY=($(compgen -W "ca node client" -- "$cur")) ;;
    fmt|test) compopt -o default 2>/dev/null ;;
    esac
    return 0
}

complete -F _nspl nspl`

const zshCompletion = `#compdef nspl
# zsh completion for nspl, from nspl completion zsh. Save it as _nspl in a
# directory on $fpath (before compinit runs), or load it now with
#     source <(nspl completion zsh)
# Statements after -c and domain names after --domain complete live through
# nspl --suggest, with the connection flags already on the command line.

_nspl_valued=' @VALUED@ '
typeset -ga _nspl_conn

# _nspl_suggest TEXT prints one line per candidate: KIND START TEXT.
_nspl_suggest() {
  emulate -L zsh
  setopt no_multibyte
  local text=$1 out
  out=$(command nspl "${_nspl_conn[@]}" --suggest "$text" --cursor ${#text} 2>/dev/null) || return 0
  local re='\{"text":"([^"]*)","kind":"([a-z]+)","replace":\{"start":([0-9]+),"end":[0-9]+\}\}'
  while [[ $out =~ $re ]]; do
    print -r -- "$match[2] $match[3] $match[1]"
    out=${out#*"$MATCH"}
  done
}

_nspl() {
  emulate -L zsh
  setopt no_multibyte
  local cur=$PREFIX prev=${words[CURRENT-1]} cmd= i w n kind start t
  _nspl_conn=()
  for (( i = 2; i < CURRENT; i++ )); do
    w=${words[i]}
    case $w in
      (@CONN@) _nspl_conn+=("$w" "${(Q)words[i+1]}"); (( i++ )) ;;
      (@CONNEQ@) _nspl_conn+=("${(Q)w}") ;;
      (-*=*) ;;
      (-*) n=${w#-}; n=${n#-}; [[ $_nspl_valued == *" $n "* ]] && (( i++ )) ;;
      (*) [[ -z $cmd ]] && cmd=$w ;;
    esac
  done
  case $prev in
    (-c|--c)
      local -a full
      _nspl_suggest "$cur" | while read -r kind start t; do
        t=${cur[1,start]}$t
        [[ $t == $cur* ]] && full+=("$t")
      done
      compadd -U -Q -S ' ' -- "${full[@]}"
      return ;;
    (-domain|--domain)
      if [[ $cmd == (clock|backup) ]]; then
        local -a names
        _nspl_suggest "USE " | while read -r kind start t; do
          [[ $kind == domain ]] && names+=("${t//$'\x60'/}")
        done
        compadd -- "${names[@]}"
        return
      fi ;;
    (-format|--format) compadd table json plain csv; return ;;
  esac
  n=${prev#-}; n=${n#-}
  if [[ $prev == -* && $_nspl_valued == *" $n "* ]]; then
    _files
    return
  fi
  if [[ $cur == -* ]]; then
    local flags
    case $cmd in
@ARMS@
      (*) flags='@TOPFLAGS@' ;;
    esac
    compadd -- ${=flags}
    return
  fi
  case $cmd in
    ('') compadd @COMMANDS@ ;;
    (help) [[ $prev == help ]] && compadd @COMMANDS@ ;;
    (completion) [[ $prev == completion ]] && compadd bash zsh fish ;;
    (cert) [[ $prev == cert ]] && compadd ca node client ;;
    (fmt|test) _files ;;
  esac
}

if [[ ${zsh_eval_context[-1]} == loadautofunc ]]; then
  _nspl "$@"
else
  compdef _nspl nspl
fi`

const fishCompletion = `# fish completion for nspl, from nspl completion fish. Save it as
# ~/.config/fish/completions/nspl.fish, or load it now with
#     nspl completion fish | source
# Statements after -c and domain names after --domain complete live through
# nspl --suggest, with the connection flags already on the command line.

function __nspl_conn --description 'the connection flags on the command line'
    set -l toks (commandline -opc)
    set -l i 2
    while test $i -le (count $toks)
        switch $toks[$i]
            case @FISHCONN@
                echo -- $toks[$i]
                set i (math $i + 1)
                test $i -le (count $toks); and echo -- $toks[$i]
            case @FISHCONNEQ@
                echo -- $toks[$i]
        end
        set i (math $i + 1)
    end
end

# __nspl_suggest TEXT prints one line per candidate: KIND START TEXT.
function __nspl_suggest --argument-names text
    set -l n (printf '%s' "$text" | wc -c | string trim)
    set -l out (command nspl (__nspl_conn) --suggest "$text" --cursor $n 2>/dev/null); or return 0
    for m in (string match -ar '"text":"[^"]*","kind":"[a-z]+","replace":\{"start":[0-9]+' -- "$out")
        set -l t (string replace -r '^"text":"([^"]*)".*' '$1' -- $m)
        set -l k (string replace -r '.*"kind":"([a-z]+)".*' '$1' -- $m)
        set -l s (string replace -r '.*"start":([0-9]+)$' '$1' -- $m)
        echo "$k $s $t"
    end
end

function __nspl_statement
    set -l text (string replace -r '^[\'"]' '' -- (commandline -ct))
    for line in (__nspl_suggest "$text")
        set -l parts (string split -m 2 ' ' -- $line)
        echo (string sub -l $parts[2] -- "$text")$parts[3]
    end
end

function __nspl_domains
    for line in (__nspl_suggest 'USE ')
        set -l parts (string split -m 2 ' ' -- $line)
        test $parts[1] = domain; and string replace -a \x60 '' -- $parts[3]
    end
end

complete -c nspl -f
complete -c nspl -n '__fish_use_subcommand' -a '@COMMANDS@'
complete -c nspl -n '__fish_seen_subcommand_from help' -a '@COMMANDS@'
complete -c nspl -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'
complete -c nspl -n '__fish_seen_subcommand_from cert' -a 'ca node client'
complete -c nspl -n '__fish_seen_subcommand_from fmt test' -F
@ARMS@
complete -c nspl -s c -x -a '(__nspl_statement)'
complete -c nspl -n '__fish_seen_subcommand_from clock backup' -l domain -x -a '(__nspl_domains)'
complete -c nspl -l format -x -a 'table json plain csv'`
