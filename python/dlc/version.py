"""dlc's version (part of the disk cache's keys)."""

__version__ = "0.1.0"
