#!/bin/sh
# same_output.sh - show that two builds of rbdecode give byte-identical
# output on every recording we have: the committed Intel PT fixtures, the
# real recordings in ../shared/fixtures (Intel PT, CoreSight perf.data and
# snapshots, the zoo), and recordings made here on the spot (mkimc's IMC,
# loss and timeline files, a perf record with call chains, an rbrecord
# --ftrace trace.dat where tracefs allows it). Every command is compared:
# stdout, stderr and exit status of info (--json, --stats, --header-only),
# gaps (--json), script (--itrace variants, -j 2, --time / -C, switches),
# coverage, dump --packets, autofdo, elements, imc, and export, whose
# database is compared as `sqlite3 .dump`.
#
#   scripts/same_output.sh OLD_BUILD NEW_BUILD [WORK]
#
# OLD_BUILD, NEW_BUILD: build folders (each with rbdecode and scripts/mkimc).
# Inputs are made once, with OLD_BUILD's tools, and fed to both. Prints one
# line per case that differs and ends with "N same, N differ"; exit 1 if any
# differs. WORK (default: a temporary folder, removed) keeps every output.
set -u
old=$(cd "$1" && pwd) new=$(cd "$2" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
FIX=${RB_FIXTURES:-$top/../shared/fixtures}
PTG=$top/tests/fixtures/intel-pt-gen
if [ $# -ge 3 ]; then
	work=$3
	mkdir -p "$work"
else
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
fi
in=$work/in
mkdir -p "$in" "$work/old" "$work/new"
same=0 differ=0

# --- inputs made here -------------------------------------------------------
for m in imc stat losses mixed; do
	"$old/scripts/mkimc" $m "$in/$m.data" >/dev/null 2>&1
	"$old/scripts/mkimc" $m "$in/$m-be.data" --foreign >/dev/null 2>&1
done
"$old/scripts/mkimc" imc "$in/imc2.data" --dump "$in/imc.dump" >/dev/null 2>&1
if command -v perf >/dev/null 2>&1; then
	perf record -q -g -e cpu-clock -F 2000 -o "$in/cg.data" -- sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done' >/dev/null 2>&1
	perf record -q -e cpu-clock -F 1000 -o - -- sh -c 'ls / >/dev/null' >"$in/pipe.data" 2>/dev/null
fi
[ -x "$old/rbrecord" ] && "$old/rbrecord" -q -e cpu-clock --ftrace sched:sched_switch -o "$in/ft.data" -- \
	sh -c 'sleep 0.05; ls / >/dev/null' >/dev/null 2>&1
# a truncated copy of each kind, so the partial paths are compared too
head -c 3000 "$PTG/loops-full/perf.data" >"$in/pt-trunc.data"
[ -f "$FIX/coresight-perf/perf_etm.data" ] && head -c 40000 "$FIX/coresight-perf/perf_etm.data" >"$in/cs-trunc.data"

# --- cases: NAME then the arguments, run as `rbdecode ARGS` in $in -------------
cases=$work/cases
: >"$cases"
case_() { printf '%s\t%s\n' "$1" "$2" >>"$cases"; }
perfdata_cases() {   # perfdata_cases NAME FILE [DECODE_OPTS]
	pn=$1 pf=$2 po=${3:-}
	case_ "$pn.info" "info $pf"
	case_ "$pn.info-json" "info --json $pf"
	case_ "$pn.info-stats" "info --stats $pf"
	case_ "$pn.info-header" "info --header-only $pf"
	case_ "$pn.gaps" "gaps $po $pf"
	case_ "$pn.gaps-json" "gaps --json $po $pf"
	case_ "$pn.script" "script $po $pf"
	case_ "$pn.script-sw" "script --show-switch-events $po $pf"
	case_ "$pn.coverage" "coverage --json $pf"
	case_ "$pn.export" "export $pf $po -q -o @DB@"
}
pt_cases() {   # pt_cases NAME FILE [DECODE_OPTS]
	perfdata_cases "$@"
	pn=$1 pf=$2 po=${3:-}
	case_ "$pn.script-i" "script --itrace=i50 $po $pf"
	case_ "$pn.script-bpw" "script --itrace=bpw $po $pf"
	case_ "$pn.script-j2" "script -j 2 $po $pf"
	case_ "$pn.dump" "dump --packets $pf"
	case_ "$pn.export-i" "export $pf --itrace=bi50pw $po -q -o @DB@"
	case_ "$pn.export-calls" "export $pf --calls-only $po -q -o @DB@"
	case_ "$pn.export-rows" "export $pf --itrace=b --calls $po -q -o @DB@"
	case_ "$pn.export-j2" "export $pf -j 2 $po -q -o @DB@"
}
for d in "$PTG"/*/; do
	n=$(basename "$d")
	[ -f "$d/perf.data" ] || continue
	o="--symfs $PTG"
	case $n in loops-kernel|loops-kaslr) o="$o --vmlinux $PTG/rbfix/kmini" ;; esac
	pt_cases "ptg-$n" "$d/perf.data" "$o"
done
case_ "ptg-loops-kernel.kcore" "script --symfs $PTG --kcore $PTG/loops-kernel/kcore_dir $PTG/loops-kernel/perf.data"
case_ "ptg-loops-full.time" "script --symfs $PTG --time 0.0001,1000000 -C 0 $PTG/loops-full/perf.data"
case_ "ptg-threads-2cpu.cpu1" "script --symfs $PTG -C 1 $PTG/threads-2cpu/perf.data"
case_ "ptg-loops-full.stdin" "script --symfs $PTG - <$PTG/loops-full/perf.data"
pt_cases pt-trunc pt-trunc.data "--symfs $PTG"
if [ -f "$FIX/intel-pt/perf.data.piped.intel_pt-4.14" ]; then
	pt_cases skylake "$FIX/intel-pt/perf.data.piped.intel_pt-4.14"
fi
if [ -d "$FIX/coresight-perf" ]; then
	cs=$FIX/coresight-perf
	for f in perf_etm perf_with_missing_aux_data; do
		perfdata_cases "cs-$f" "$cs/$f.data" "--symfs $cs"
		case_ "cs-$f.autofdo" "autofdo --symfs $cs $cs/$f.data"
		case_ "cs-$f.elements" "elements --symfs $cs $cs/$f.data"
	done
	perfdata_cases cs-trunc cs-trunc.data "--symfs $cs"
fi
for f in "$FIX"/zoo/*; do
	case $f in *.txt|*README*) continue ;; esac
	perfdata_cases "zoo-$(basename "$f")" "$f"
done
if [ -d "$FIX/opencsd-snapshots" ]; then
	for s in $(find "$FIX/opencsd-snapshots" -name snapshot.ini | sort); do
		d=$(dirname "$s")
		n=snap-$(echo "${d#$FIX/opencsd-snapshots/}" | tr / -)
		case_ "$n.elements" "elements $d"
		case_ "$n.elements-pkt" "elements --packets $d"
	done
fi
for m in imc stat losses mixed imc-be stat-be losses-be mixed-be; do
	[ -f "$in/$m.data" ] && perfdata_cases "mk-$m" "$m.data"
done
[ -f "$in/imc.dump" ] && case_ mk-imc.dump "imc --json imc.dump" && case_ mk-imc.dump-text "imc --start-tb 1000000 imc.dump"
[ -f "$in/cg.data" ] && perfdata_cases perf-cg cg.data && case_ perf-cg.disasm "script --disasm cg.data"
[ -f "$in/pipe.data" ] && perfdata_cases perf-pipe pipe.data
if [ -f "$in/ft.data.trace.dat" ]; then
	perfdata_cases rb-ftrace ft.data
	case_ rb-ftrace.tracedat "export ft.data.trace.dat -q -o @DB@"
fi
case_ bad.missing "info no-such-file.data"
case_ bad.usage "script --no-such-option x"

# --- run ----------------------------------------------------------------------
run() {   # run SIDE BUILD NAME ARGS
	side=$1 b=$2 o=$work/$1/$3
	db=$o.db
	rm -f "$db"
	args=$(printf '%s' "$4" | sed "s|@DB@|$db|")
	(cd "$in" && eval "\"$b/rbdecode\" $args" >"$o.out" 2>"$o.err" </dev/null)
	echo $? >"$o.rc"
	sed -i "s|$work/$side/||g; s|$old/||g; s|$new/||g" "$o.err" "$o.out"   # both: ft.data names old's rbrecord
	if [ -f "$db" ]; then
		sqlite3 "$db" .dump >"$o.dump" 2>&1 </dev/null
		rm -f "$db"
	fi
}
while IFS='	' read -r n a <&3; do
	run old "$old" "$n" "$a"
	run new "$new" "$n" "$a"
	d=
	for x in out err rc dump; do
		[ -f "$work/old/$n.$x" ] || [ -f "$work/new/$n.$x" ] || continue
		cmp -s "$work/old/$n.$x" "$work/new/$n.$x" || d="$d $x"
	done
	if [ -n "$d" ]; then
		differ=$((differ + 1))
		echo "DIFFER $n:$d (rbdecode $a)"
	else
		same=$((same + 1))
	fi
done 3<"$cases"
echo "$same same, $differ differ"
[ "$differ" -eq 0 ]
