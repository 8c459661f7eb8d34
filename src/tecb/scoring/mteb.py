"""The mteb that the scores reproduce: its version and its default task seed. Light at import (no numpy): the
workflow imports :mod:`tecb.report.mteb_results`, which names them, to name its outputs."""

#: The mteb version whose clustering evaluators the paper protocol and the v2 mode reproduce (the pinned test-only
#: dependency; tests check it equals the installed mteb; the workflow never imports mteb).
MTEB_VERSION = "2.26.24"
#: mteb's default task seed (the leaderboard's).
MTEB_SEED = 42
