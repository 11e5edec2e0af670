"""Settings of the worker subprocesses the worker tests start: the project's settings, plus the
export throttle (SPOKE_MEMORY_EXPORT_CHUNK_PAUSE_S, from the environment) so a test can kill a
worker while an export is under way."""

import os

from spokememory.settings import *  # noqa: F403

SPOKE_MEMORY_EXPORT_CHUNK_PAUSE_S = float(os.environ.get("SPOKE_TEST_EXPORT_PAUSE_S", "0"))
