"""Structured logging into the host's logs, tagged by the host with the provider and the call.

`capw.log.info("instance created", id=instance_id, zone=zone)`: the keyword arguments are the
record's fields, in the order given, their values turned into strings. The host drops records
below its level and bounds their number and size per call. Never log secret material.
"""

from __future__ import annotations

from . import host as _host

LEVELS = ("trace", "debug", "info", "warn", "error")


def log(level: str, message: str, **fields: object) -> None:
    """One record at `level` (one of `LEVELS`)."""
    if level not in LEVELS:
        raise ValueError(f"log level must be one of {LEVELS}, not {level!r}")
    _host.current.log(level, message, [(k, str(v)) for k, v in fields.items()])


def trace(message: str, **fields: object) -> None:
    """A record at level trace."""
    log("trace", message, **fields)


def debug(message: str, **fields: object) -> None:
    """A record at level debug."""
    log("debug", message, **fields)


def info(message: str, **fields: object) -> None:
    """A record at level info."""
    log("info", message, **fields)


def warn(message: str, **fields: object) -> None:
    """A record at level warn."""
    log("warn", message, **fields)


def error(message: str, **fields: object) -> None:
    """A record at level error."""
    log("error", message, **fields)
