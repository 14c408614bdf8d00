# Shared by the load scripts of examples/bench (sourced, not run).

# cpu_ticks PID: user+system CPU clock ticks the process and its children
# (nginx's workers) used so far (Linux /proc; empty elsewhere).
cpu_ticks() {
	local root=$1 p total=0 f
	[ -r "/proc/$root/stat" ] || return 0
	for p in "$root" $(cat /proc/"$root"/task/*/children 2>/dev/null); do
		[ -r "/proc/$p/stat" ] || continue
		f=$(<"/proc/$p/stat") || continue
		f=${f##*) } # past "pid (comm) "
		read -ra f <<<"$f"
		total=$((total + f[11] + f[12])) # utime, stime (fields 14, 15 of the line)
	done
	echo "$total"
}

# round_order ROUND RUN...: the runs in the order round ROUND measures
# them, one per line: reversed every other round, so drift affects all
# runs alike.
round_order() {
	local round=$1 i
	shift
	if ((round % 2 == 0)); then
		for ((i = $#; i >= 1; i--)); do echo "${!i}"; done
	else
		printf '%s\n' "$@"
	fi
}
