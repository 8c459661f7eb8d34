"""Snakemake logger plugin ``tecb`` (``--logger tecb``; both profiles set it): a per-rule progress line.

After every finished job it prints ``progress: 40/106 jobs; embed 3/6 (1 running), cluster 30/90, ...``
to the terminal, and at the end of the run the same line with every rule. Snakemake finds the plugin by its package
name (``snakemake_logger_plugin_*``, installed with the library); the counting and the line are
:mod:`tecb.progress`'s, this module only hands Snakemake's job events to it.

Snakemake's own terminal output stays as it is: the handler says it does not write to the stream (a plugin that
does replaces Snakemake's console handler) and hands its lines to Snakemake's console and log-file handlers. It
prints nothing until the run announced its plan (the job stats), so a dry run, a run with nothing to do and the
inner Snakemake of a cluster or group job stay silent.

Snakemake reads the ``--configfile`` files before any code of the workflow runs, and refuses a file that is not YAML
(a tab, say) or not a mapping without saying where. When it does, this handler, set up before, prints the message
``python -m tecb.configcheck`` gives (the file, the line and column: :func:`tecb.config.yaml_problems`), also in a
dry run.
"""

from __future__ import annotations

import logging
import sys
from logging import LogRecord
from logging.handlers import QueueHandler

from snakemake.logging import logger
from snakemake_interface_logger_plugins.base import LogHandlerBase
from snakemake_interface_logger_plugins.common import LogEvent

from tecb.config import configfile_arguments, yaml_problems
from tecb.progress import RunProgress


class LogHandler(LogHandlerBase):
    def __post_init__(self) -> None:
        self.progress = RunProgress()
        self.planned = False
        self.closed = False
        quiet = {getattr(q, "name", str(q)).lower() for q in self.common_settings.quiet or ()}
        self.silent = bool(self.common_settings.dryrun) or bool(quiet & {"progress", "all"})

    def emit(self, record: LogRecord) -> None:
        event = getattr(record, "event", None)
        if event == LogEvent.ERROR and "Config file" in str(record.msg):  # Snakemake's, on a --configfile
            for problem in yaml_problems(configfile_arguments(sys.argv[1:])):
                self._print(f"tecb: {problem}")
        if self.silent or event is None:
            return
        if event == LogEvent.RUN_INFO:
            self.progress.plan({rule: n for rule, n in record.stats.items() if rule != "total"})
            self.planned = True
        elif not self.planned:
            return
        elif event == LogEvent.JOB_INFO:
            self.progress.started(record.jobid, record.rule_name)
        elif event == LogEvent.JOB_ERROR:
            self.progress.failed(record.jobid, record.rule_name)
        elif event == LogEvent.JOB_FINISHED:
            self.progress.finished(record.job_id)
        elif event == LogEvent.PROGRESS:  # after each finished job (or group), Snakemake's "N of M steps"
            self._print(self.progress.line())

    def close(self) -> None:
        """The end of the run (Snakemake closes its handlers once, Python's logging again at exit)."""
        if self.planned and not self.closed and not self.silent:
            self._print(self.progress.line(end=True))
        self.closed = True
        super().close()

    def _print(self, line: str) -> None:
        """Through Snakemake's own console and log-file handlers: so the line never cuts into one of Snakemake's
        (this runs in the plugins' log thread) and is in ``.snakemake/log/`` too."""
        record = logging.makeLogRecord({"name": logger.name, "levelno": logging.INFO, "levelname": "INFO", "msg": line})
        for handler in logger.handlers:
            if not isinstance(handler, QueueHandler):  # the plugins' queue: this handler's own input
                handler.handle(record)

    @property
    def writes_to_stream(self) -> bool:
        return False  # adds lines beside Snakemake's console output, which stays (see the module docstring)

    @property
    def writes_to_file(self) -> bool:
        return False

    @property
    def has_filter(self) -> bool:
        return True  # every job event, whatever --quiet hides from the console

    @property
    def has_formatter(self) -> bool:
        return True  # prints its own line

    @property
    def needs_rulegraph(self) -> bool:
        return False
