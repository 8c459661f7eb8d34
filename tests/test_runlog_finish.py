"""runlog.finish: a script's process ends at once, its log and exit handlers complete; a failure still fails."""

import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")


def _run(tmp_path, body: str):
    code = (
        "import atexit, sys\n"
        f"sys.path.insert(0, {SRC!r})\n"
        "from tecb.runlog import finish, open_log\n"
        f"atexit.register(lambda: open({str(tmp_path / 'atexit.txt')!r}, 'w').write('ran'))\n"
        f"log = open_log({str(tmp_path / 'job.log')!r})\n"
        "log('written')\n"
        "print('printed, unflushed', end='')\n" + body
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_finish_exits_zero_with_the_log_flushed_and_exit_handlers_run(tmp_path):
    proc = _run(tmp_path, "finish()\nraise SystemExit('never reached')\n")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "job.log").read_text() == "written\nprinted, unflushed"
    assert (tmp_path / "atexit.txt").read_text() == "ran"


def test_an_error_before_finish_still_fails_the_job(tmp_path):
    proc = _run(tmp_path, "raise ValueError('bad input')\nfinish()\n")
    assert proc.returncode == 1
    assert "ValueError: bad input" in (tmp_path / "job.log").read_text()
