# bash completion for ptloom (installed as
# $datadir/bash-completion/completions/ptloom by meson install)
_ptloom()
{
	local cur prev cmd i
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	if ((COMP_CWORD == 1)); then
		COMPREPLY=($(compgen -W "run replay minimize show races --help --version" -- "$cur"))
		return
	fi
	cmd=${COMP_WORDS[1]}
	# after --, the program and its arguments
	for ((i = 2; i < COMP_CWORD; i++)); do
		if [[ ${COMP_WORDS[i]} == -- ]]; then
			if ((i == COMP_CWORD - 1)); then
				COMPREPLY=($(compgen -c -- "$cur"))
			else
				COMPREPLY=($(compgen -f -- "$cur"))
			fi
			return
		fi
	done
	case $prev in
	-s | --strategy) COMPREPLY=($(compgen -W "dfs random pct" -- "$cur")); return ;;
	--points) COMPREPLY=($(compgen -W "sync atomics races sync,races all" -- "$cur")); return ;;
	--report-format) COMPREPLY=($(compgen -W "json markdown junit" -- "$cur")); return ;;
	-f | --format)
		if [[ $cmd == races ]]; then
			COMPREPLY=($(compgen -W "text json" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "text json markdown script html" -- "$cur"))
		fi
		return ;;
	--stop-at) COMPREPLY=($(compgen -W "failure" -- "$cur")); return ;;
	-o | --out) COMPREPLY=($(compgen -d -- "$cur")); return ;;
	--report) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	-p | --preemptions | -n | --max-runs | --max-time | --min-coverage | --max-steps | --timeout | --seed | \
	-j | --jobs | -e | --env | --pct-depth | --runs | --budget | --shard)
		return ;;
	esac
	local opts
	case $cmd in
	run) opts="--preemptions --strategy --max-runs --max-time --max-steps --timeout --seed --points --pct-depth --reduction --no-reduction --dfs-only --no-minimize --minimize-time --out --report --report-format --jobs --shard --env --keep-env --fail-on-child-crash --no-fast-path --clock-start --min-coverage --output --quiet --help" ;;
	replay) opts="--max-steps --timeout --report --report-format --env --trust-env --fail-on-child-crash --no-fast-path --gdb --core --stop-at --output --quiet --help" ;;
	minimize | minimise) opts="--max-steps --timeout --minimize-time --out --report --report-format --env --trust-env --fail-on-child-crash --no-fast-path --output --quiet --help" ;;
	show) opts="--format --help" ;;
	races) opts="--runs --budget --seed --max-steps --timeout --format --env --clock-start --quiet --help" ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts --" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}
complete -F _ptloom ptloom
