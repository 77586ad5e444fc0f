#!/usr/bin/env python3
"""Runs the same small concurrent programs under GenMC and under fgvt, side by side.

Each program is written twice with the same orderings: in C11 for GenMC (`c/`, assertions
check what the Rust test's linearizability check does) and in Rust on fgvt-sync (`src/main.rs`,
with a test in `tests/`). For each, the script runs GenMC (RC11, its default model) on the C
program and `localize` on the Rust test, each as a whole process, one after the other, and
prints one Markdown table: both verdicts, GenMC's complete (and blocked) executions, fgvt's
leaves and distinct states, both wall times, and fgvt's time over GenMC's.

GenMC is not a package: `build_genmc.sh` builds the pinned release from source with Debian's
LLVM. Pass its path with `--genmc`, or have `genmc` on `PATH`.

Usage: benches/genmc/run.py [--genmc PATH] [--timeout SECONDS] [--out FILE] [program ...]
Nothing here is part of the test suite: it needs GenMC, and minutes.
"""

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# name: the C program and its flags, GenMC's options, the fgvt test.
PROGRAMS = {
    "treiber 2 threads": dict(c="treiber.c", flags=["-DN=2"], test="treiber2.json"),
    "treiber 3 threads": dict(c="treiber.c", flags=["-DN=3"], test="treiber3.json"),
    "treiber 2 threads, buggy push": dict(c="treiber.c", flags=["-DN=2", "-DBUGGY"],
                                          test="treiber2_buggy.json"),
    "treiber 3 threads, buggy push": dict(c="treiber.c", flags=["-DN=3", "-DBUGGY"],
                                          test="treiber3_buggy.json"),
    # GenMC's in-place revisiting reports the two threads' stores to `turn` as an error of its
    # own ("unordered writes"), a false alarm on this correct lock: it is turned off.
    "peterson SeqCst": dict(c="peterson.c", flags=["-DSC"], options=["--disable-ipr"],
                            test="peterson_sc.json"),
    "peterson Release/Acquire": dict(c="peterson.c", flags=[], options=["--disable-ipr"],
                                     test="peterson_ra.json"),
    "spsc ring Release/Acquire": dict(c="ring.c", flags=["-DRA"], test="ring_ra.json"),
    "spsc ring Relaxed": dict(c="ring.c", flags=[], test="ring_relaxed.json"),
    "fenced seqlock": dict(c="seqlock.c", flags=[], test="seqlock.json"),
}


def run(cmd, cwd, timeout):
    """Runs `cmd`: its exit code (None on timeout), standard output and error, and wall time."""
    started = time.monotonic()
    try:
        done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
        return done.returncode, done.stdout, done.stderr, time.monotonic() - started
    except subprocess.TimeoutExpired:
        return None, "", "", time.monotonic() - started


def genmc(binary, spec, timeout):
    """GenMC's verdict, executions (complete, blocked) and time on the program's C file."""
    cmd = [binary, *spec.get("options", []), "--", *spec["flags"], str(HERE / "c" / spec["c"])]
    code, out, err, took = run(cmd, HERE, timeout)
    out += err
    if code is None:
        return "timeout", "", took
    complete = re.search(r"complete executions explored: (\d+)", out)
    blocked = re.search(r"blocked executions seen: (\d+)", out)
    if "No errors were detected" in out:
        verdict = "pass"
    elif "Error detected" in out or "error" in out.lower():
        verdict = "fail"
    else:
        sys.exit(f"GenMC said something unexpected on {spec['c']}:\n{out}")
    # GenMC stops at the first error it finds, without a count.
    executions = complete.group(1) if complete else "—"
    if blocked:
        executions += f" ({blocked.group(1)} blocked)"
    return verdict, executions, took


def fgvt(binary, spec, timeout):
    """fgvt's verdict, leaves, distinct states and time on the program's test."""
    cmd = [str(binary), "localize", str(HERE / "tests" / spec["test"]), "--format", "json",
           "--timeout", str(timeout)]
    code, out, _, took = run(cmd, HERE, timeout + 30)
    if code is None:
        return "timeout", "", "", took
    report = json.loads(out)
    verdict = {"linearizable": "pass", "not-linearizable": "fail"}.get(report["verdict"],
                                                                      report["verdict"])
    tree = report["tree"]
    return verdict, str(tree["leaves"]), str(tree["distinct_states"]), took


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("programs", nargs="*", help="names from PROGRAMS (default: all)")
    parser.add_argument("--genmc", default=shutil.which("genmc"))
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--out")
    args = parser.parse_args()
    if not args.genmc:
        sys.exit("no GenMC: build it with benches/genmc/build_genmc.sh and pass --genmc PATH")
    names = args.programs or list(PROGRAMS)
    unknown = [n for n in names if n not in PROGRAMS]
    if unknown:
        sys.exit(f"unknown programs {unknown}; known: {list(PROGRAMS)}")
    build = subprocess.run(["cargo", "build", "--release", "--manifest-path",
                            str(HERE / "Cargo.toml")], capture_output=True, text=True)
    if build.returncode != 0:
        sys.exit(build.stderr)
    binary = HERE / "target" / "release" / "fgvt-genmc-bench"
    table = ["| program | GenMC | executions | GenMC s | fgvt | leaves | states | fgvt s "
             "| fgvt / GenMC |",
             "| --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |"]
    for name in names:
        spec = PROGRAMS[name]
        g_verdict, executions, g_took = genmc(args.genmc, spec, args.timeout)
        f_verdict, leaves, states, f_took = fgvt(binary, spec, args.timeout)
        ratio = f"{f_took / g_took:.1f}×" if g_took > 0 else ""
        table.append(f"| {name} | {g_verdict} | {executions} | {g_took:.2f} | {f_verdict} | "
                     f"{leaves} | {states} | {f_took:.2f} | {ratio} |")
        print(table[-1], flush=True)
    print()
    print("\n".join(table))
    if args.out:
        Path(args.out).write_text("\n".join(table) + "\n")


if __name__ == "__main__":
    main()
