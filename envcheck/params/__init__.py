"""One declaration per input (envcheck/params/catalog.py), of the kinds in params/core.py."""
from envcheck.params.catalog import *  # noqa: F401,F403
from envcheck.params.core import WEEK, Param, parse_size  # noqa: F401
from envcheck.params.text import excerpt  # noqa: F401
