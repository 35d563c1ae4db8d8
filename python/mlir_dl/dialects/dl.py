"""Op builders of the dl dialect, generated from its ODS definition."""

from ._dl_ops_gen import *  # noqa: F401,F403
