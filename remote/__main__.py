import sys

from remote.cli import entry

sys.exit(entry())
