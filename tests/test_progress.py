"""Progress lines: one per update, and a heartbeat with rate and ETA while a step runs long."""

import gc
import time

from tecb.embed.encode import Progress


def test_heartbeat_logs_rate_and_eta_between_updates_and_stops_at_the_end():
    lines = []
    progress = Progress(100, lines.append, heartbeat=0.2)
    progress.update(10)
    time.sleep(0.7)  # a long step: the heartbeat says so, with the count so far, its rate and an ETA
    beats = [line for line in lines if "still working" in line]
    assert beats and all(
        line.startswith("10/100 texts (10%)") and "texts/s" in line and "ETA" in line for line in beats
    )
    progress.update(100)
    assert lines[-1].startswith("100/100 texts (100%)") and lines[-1].endswith("ETA 0:00:00")
    n = len(lines)
    time.sleep(0.5)
    assert len(lines) == n  # done: no more lines


def test_no_heartbeat_when_off_closed_or_dropped():
    lines = []
    Progress(10, lines.append, heartbeat=0).update(1)
    closed = Progress(10, lines.append, heartbeat=0.1)
    closed.close()
    dropped = Progress(10, lines.append, heartbeat=0.1)
    del dropped
    gc.collect()
    time.sleep(0.4)
    assert lines == ["1/10 texts (10%), " + lines[0].split(", ", 1)[1]] and "still working" not in lines[0]
    assert closed.beat() is None
