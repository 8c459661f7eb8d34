"""Per-job resource monitor of a workflow run: peak RSS and CPU seconds of every job process, by its log file.

Every ``interval`` seconds it scans ``/proc`` for processes holding an open file under ``--logs`` (a workflow
script opens its job's log at its first line and keeps it open, ``tecb.runlog.open_log``), and records per job
(= log file): the kernel's own peak resident set (``VmHWM`` of ``/proc/PID/status``: exact, not sampled), the CPU
seconds (user + system of the process and its waited-for children, ``/proc/PID/stat``, last reading before it
ended), its first and last sighting. A job's record is appended to ``--out`` (JSON lines) when its process is gone.
Runs until ``--until-gone PID`` (the Snakemake process) ends.

    python benchmarks/paper_scale_monitor.py --logs logs/paper-scale --out benchmarks/paper_scale_jobs.jsonl \\
        --until-gone $SNAKEMAKE_PID
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def job_log(pid: str, logs: str) -> str | None:
    """The file under ``logs`` that process ``pid`` holds open, if any."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return None
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith(logs) and target.endswith(".log"):
            return target
    return None


def sample(pid: str) -> tuple[float, int] | None:
    """``(CPU seconds, peak RSS in kB)`` of a live process."""
    stat, status = _read(f"/proc/{pid}/stat"), _read(f"/proc/{pid}/status")
    if stat is None or status is None:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    cpu = sum(int(x) for x in fields[11:15]) / TICK  # utime, stime, cutime, cstime
    hwm = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")), 0)
    return cpu, hwm


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--logs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--until-gone", type=int, required=True)
    ap.add_argument("--interval", type=float, default=0.5)
    args = ap.parse_args(argv)
    logs = str(Path(args.logs).resolve())
    live: dict[str, dict] = {}  # pid -> record
    with open(args.out, "a", encoding="utf-8") as out:
        while True:
            seen = set()
            for pid in os.listdir("/proc"):
                if not pid.isdigit() or pid == str(os.getpid()):
                    continue
                rec = live.get(pid)
                if rec is None:
                    log = job_log(pid, logs)
                    if log is None:
                        continue
                    rec = live[pid] = {"log": os.path.relpath(log), "pid": int(pid), "first_seen": time.time()}
                got = sample(pid)
                if got is None:
                    continue
                seen.add(pid)
                rec["cpu_s"], rec["peak_rss_mb"] = got[0], max(rec.get("peak_rss_mb", 0), got[1] / 1024)
                rec["last_seen"] = time.time()
            for pid in [p for p in live if p not in seen]:
                out.write(json.dumps(live.pop(pid)) + "\n")
                out.flush()
            if not os.path.exists(f"/proc/{args.until_gone}"):
                break
            time.sleep(args.interval)


if __name__ == "__main__":
    main()
