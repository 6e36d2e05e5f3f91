"""``python -m agenthub``: the same as the ``agenthub`` command."""

import sys

from agenthub.cli.main import main

sys.exit(main())
